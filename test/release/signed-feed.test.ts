import { execFileSync } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { limit } from "../helpers/release-kit.js";
import { treeBytes } from "../helpers/st4r-tree-bytes.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../helpers/workspace.js";

/**
 * An independent consumer of Sparkle 2.9's signed feed: Python `cryptography`
 * over the bytes before the block, found as SPUExtractSignedFeed.m finds it
 * (the LAST "<!-- sparkle-signatures:\n", then the first "-->" after it,
 * lines "edSignature:" / "length:" trimmed). Prints JSON.
 */
const PY_FEED = `
import base64, json, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.exceptions import InvalidSignature
pub = Ed25519PublicKey.from_public_bytes(base64.b64decode(sys.argv[1]))
def verdict(file):
    data = open(file, "rb").read()
    prefix = b"<!-- sparkle-signatures:\\n"
    at = data.rfind(prefix)
    end = data.find(b"-->", at + len(prefix)) if at >= 0 else -1
    if at < 0 or end < 0:
        return {"signed": False}
    sig, length = None, 0
    for line in data[at + len(prefix):end].decode("utf-8").splitlines():
        if line.startswith("edSignature:"): sig = line[len("edSignature:"):].strip()
        elif line.startswith("length:"): length = int(line[len("length:"):].strip())
    content = data[:at]
    try:
        pub.verify(base64.b64decode(sig), content); valid = True
    except InvalidSignature:
        valid = False
    return {"signed": True, "valid": valid, "lengthOk": length == len(content), "blocks": data.count(prefix), "after": data[end:].decode()}
print(json.dumps([verdict(f) for f in sys.argv[2:]]))
`;

/** Python: every releaseNotesLink of the appcast, its attributes, and whether its signature verifies over the page in the store. */
const PY_NOTES = `
import base64, json, sys, os
import xml.etree.ElementTree as ET
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.exceptions import InvalidSignature
S = "{http://www.andymatuschak.org/xml-namespaces/sparkle}"
pub = Ed25519PublicKey.from_public_bytes(base64.b64decode(sys.argv[1]))
root = ET.parse(sys.argv[2]).getroot()
out = []
for link in root.iter(S + "releaseNotesLink"):
    url = link.text.strip()
    page = open(os.path.join(sys.argv[3], url.split("https://updates.example.com/", 1)[1]), "rb").read()
    sig, length = link.get(S + "edSignature"), link.get(S + "length")
    try:
        pub.verify(base64.b64decode(sig), page); valid = True
    except Exception:
        valid = False
    out.append({"url": url, "valid": valid, "lengthOk": length == str(len(page))})
print(json.dumps(out))
`;

interface FeedVerdict { signed: boolean; valid?: boolean; lengthOk?: boolean; blocks?: number; after?: string }

/** One Python run reads every file given (in order): each file's verdict, as Sparkle would judge it. */
function pythonFeeds(publicKey: string, files: string[]): FeedVerdict[] {
  return JSON.parse(execFileSync("python3", ["-c", PY_FEED, publicKey, ...files]).toString()) as FeedVerdict[];
}

function pythonFeed(publicKey: string, file: string): FeedVerdict {
  return pythonFeeds(publicKey, [file])[0]!;
}

function pythonNotes(publicKey: string, feed: string, storeDir: string): Array<{ url: string; valid: boolean; lengthOk: boolean }> {
  return JSON.parse(execFileSync("python3", ["-c", PY_NOTES, publicKey, feed, storeDir]).toString()) as Array<{ url: string; valid: boolean; lengthOk: boolean }>;
}

/** sign_update's block, right after the content, and nothing after it. */
const BLOCK = /<\/rss>\n<!-- sparkle-signatures:\nedSignature: [A-Za-z0-9+/]{86}==\nlength: \d+\n-->\n$/;

// Every test has a workspace and store of its own: the tests run at once, three at a time.
const slot = limit(3);
const workspaces: Workspace[] = [];
async function workspace(config: Record<string, unknown> = {}): Promise<Workspace> {
  const ws = await makeWorkspace(config);
  workspaces.push(ws);
  return ws;
}
afterAll(async () => {
  await Promise.all(workspaces.map((ws) => rm(ws.dir, { recursive: true, force: true })));
});

/** The sample bundle with SURequireSignedFeed = <true/> in its Info.plist (as Xcode writes a boolean). */
async function requireSignedFeed(app: string): Promise<void> {
  const file = path.join(app, "Contents", "Info.plist");
  const text = await readFile(file, "utf8");
  await writeFile(file, text.replace("</dict>", "\t<key>SURequireSignedFeed</key>\n\t<true/>\n</dict>"));
}

async function publish(ws: Workspace, version: string, build: number, more: string[] = [], prepare?: (app: string) => Promise<void>): Promise<string> {
  const p = await ws.plugin(version, build);
  await prepare?.(p.app);
  const res = await runCli(ws.publishArgs(p, version, ["--published-at", `2026-0${build % 10 || 1}-01T10:00:00.000Z`, ...more]));
  expect(res.code, res.stderr).toBe(0);
  return res.stderr;
}

const feeds = (ws: Workspace) => [path.join(ws.storeDir, "releases", "appcast.xml"), path.join(ws.storeDir, "api", "v1", "plugins", "bridge-plugin", "appcast.xml")];

describe.concurrent("signed appcasts (Sparkle 2.9)", () => {
  it("appcast.signedFeed: both appcasts end with sign_update's block, Python verifies it, and the dry run shows the exact signed bytes", () => slot(async () => {
    const ws = await workspace({ appcast: { signedFeed: true } });
    // A notes link relcast does not host cannot be signed: Sparkle would show no notes, and the publish says so.
    expect(await publish(ws, "1.0.0", 101, ["--release-notes-url", "https://notes.example.com/{version}.html"])).toMatch(/release-notes link https:\/\/notes\.example\.com\/1\.0\.0\.html is not a page relcast hosts.*SURequireSignedFeed show no notes/s);
    const p = await ws.plugin("1.1.0", 112);
    const at = "2026-03-01T10:00:00.000Z";
    const dry = await runCli(ws.publishArgs(p, "1.1.0", ["--dry-run", "--json", "--published-at", at]));
    expect(dry.code, dry.stderr).toBe(0);
    const planned = (JSON.parse(dry.stdout) as { contents: Record<string, string> }).contents;
    expect(planned["releases/appcast.xml"]).toMatch(BLOCK);
    expect(planned["api/v1/plugins/bridge-plugin/appcast.xml"]).toBe(planned["releases/appcast.xml"]);
    const res = await runCli(ws.publishArgs(p, "1.1.0", ["--published-at", at]));
    expect(res.code, res.stderr).toBe(0);
    const verdicts = pythonFeeds(ws.key.publicKeyBase64, feeds(ws));
    for (const [i, file] of feeds(ws).entries()) {
      const bytes = await readFile(file, "utf8");
      expect(bytes).toBe(planned["releases/appcast.xml"]);
      expect(bytes).toMatch(BLOCK);
      expect(verdicts[i], file).toEqual({ signed: true, valid: true, lengthOk: true, blocks: 1, after: "-->\n" });
    }
    expect(await runCli(["verify", "--config", ws.configFile])).toMatchObject({ code: 0 });
  }));

  it("a bundle with SURequireSignedFeed gets a signed feed without any config, and the feed stays signed for later bundles, yank and rebuild", () => slot(async () => {
    const ws = await workspace();
    await publish(ws, "1.0.0", 101, [], requireSignedFeed);
    for (const verdict of pythonFeeds(ws.key.publicKeyBase64, feeds(ws))) expect(verdict).toMatchObject({ signed: true, valid: true, blocks: 1 });
    // The next bundle lacks the key: the stored feed is signed, so it stays signed (as generate_appcast does).
    await publish(ws, "1.1.0", 112);
    for (const verdict of pythonFeeds(ws.key.publicKeyBase64, feeds(ws))) expect(verdict).toMatchObject({ signed: true, valid: true, lengthOk: true, blocks: 1 });
    expect(await readFile(feeds(ws)[0]!, "utf8")).toContain("<sparkle:shortVersionString>1.1.0</sparkle:shortVersionString>");

    // A yank must sign again: without a key it stops before writing anything (E_KEY, exit 6).
    const before = await snapshotTree(ws.storeDir);
    const noKey = await runCli(["yank", "1.1.0", "--config", ws.configFile], { env: { RELCAST_SIGNING_KEY: "" } });
    expect(noKey.code).toBe(6);
    expect(noKey.stderr).toMatch(/the appcast must be signed \(the appcast in the store is signed\).*--key-file/s);
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
    // Another key would make every installed copy refuse the feed.
    const other = path.join(ws.dir, "other.key");
    await writeFile(other, (await import("../helpers/workspace.js")).newKey().seedBase64);
    const wrong = await runCli(["yank", "1.1.0", "--config", ws.configFile, "--key-file", other]);
    expect(wrong.code).toBe(6);
    // Checked as a publish checks it, against the newest bundle's SUPublicEDKey, before the stored feed's signature.
    expect(wrong.stderr).toMatch(/carries SUPublicEDKey .*installed copies check the appcast, its notes pages and the catalog index with their key/s);
    expect(await snapshotTree(ws.storeDir)).toEqual(before);

    const yanked = await runCli(["yank", "1.1.0", "--config", ws.configFile, "--key-file", ws.keyFile]);
    expect(yanked.code, yanked.stderr).toBe(0);
    const afterYank = pythonFeeds(ws.key.publicKeyBase64, feeds(ws));
    for (const [i, file] of feeds(ws).entries()) {
      expect(afterYank[i], file).toMatchObject({ signed: true, valid: true, blocks: 1 });
      expect(await readFile(file, "utf8")).not.toContain("<sparkle:shortVersionString>1.1.0<");
    }
    const rebuilt = await runCli(["rebuild", "--config", ws.configFile, "--key-file", ws.keyFile]);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(pythonFeed(ws.key.publicKeyBase64, feeds(ws)[0]!)).toMatchObject({ signed: true, valid: true, blocks: 1 });
    expect(await runCli(["verify", "--config", ws.configFile])).toMatchObject({ code: 0 });
  }));

  it("refuses appcast.signedFeed false for a bundle that requires a signed feed, before writing anything", () => slot(async () => {
    const ws = await workspace({ appcast: { signedFeed: false } });
    const p = await ws.plugin("1.0.0", 101);
    await requireSignedFeed(p.app);
    const res = await runCli(ws.publishArgs(p, "1.0.0"));
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(/SURequireSignedFeed.*appcast\.signedFeed false/s);
    expect(await snapshotTree(ws.storeDir).catch(() => ({}))).toEqual({});
  }));
});

describe.concurrent("release-notes pages", () => {
  it("are rendered from the Markdown, hosted under release-notes/, linked, and signed over their exact bytes on a signed feed", () => slot(async () => {
    const ws = await workspace({ appcast: { signedFeed: true, releaseNotes: "page" } });
    await publish(ws, "1.0.0", 101);
    await publish(ws, "1.1.0", 112);
    const page = await readFile(path.join(ws.storeDir, "release-notes", "1.1.0.html"), "utf8");
    expect(page).toContain("<li>Bridge 1.1.0 starts faster</li>");
    expect(page).toMatch(/^<!doctype html>/);
    const record = JSON.parse(await readFile(path.join(ws.storeDir, "releases", "1.1.0", "release.json"), "utf8"));
    expect(record.autoupdate.releaseNotesLink).toBe("https://updates.example.com/release-notes/1.1.0.html");
    const verdicts = pythonFeeds(ws.key.publicKeyBase64, feeds(ws));
    for (const [i, file] of feeds(ws).entries()) {
      const xml = await readFile(file, "utf8");
      expect(xml).not.toContain("<![CDATA[");
      expect(pythonNotes(ws.key.publicKeyBase64, file, ws.storeDir)).toEqual([
        { url: "https://updates.example.com/release-notes/1.1.0.html", valid: true, lengthOk: true },
        { url: "https://updates.example.com/release-notes/1.0.0.html", valid: true, lengthOk: true },
      ]);
      expect(verdicts[i], file).toMatchObject({ signed: true, valid: true });
    }
    expect(await runCli(["verify", "--config", ws.configFile])).toMatchObject({ code: 0 });
  }));

  it("on an unsigned feed are linked without signature attributes, and verify still wants them there", () => slot(async () => {
    const ws = await workspace({ appcast: { releaseNotes: "page" } });
    await publish(ws, "1.0.0", 101);
    const xml = await readFile(feeds(ws)[1]!, "utf8");
    expect(xml).toContain("<sparkle:releaseNotesLink>https://updates.example.com/release-notes/1.0.0.html</sparkle:releaseNotesLink>");
    expect(pythonFeed(ws.key.publicKeyBase64, feeds(ws)[1]!)).toEqual({ signed: false });
    expect((await runCli(["verify", "--config", ws.configFile])).code).toBe(0);
    // No signature covers an unsigned feed's pages: each is held to the page its record renders.
    const page = path.join(ws.storeDir, "release-notes", "1.0.0.html");
    const original = await readFile(page, "utf8");
    await writeFile(page, original.replace("starts faster", "starts slower"));
    const tampered = await runCli(["verify", "--config", ws.configFile]);
    expect(tampered.code).toBe(11);
    expect(tampered.stdout).toMatch(/release-notes\/1\.0\.0\.html is not the release-notes page of 1\.0\.0 as its record renders it/);
    await writeFile(page, original);
    await rm(path.join(ws.storeDir, "release-notes", "1.0.0.html"));
    const res = await runCli(["verify", "--config", ws.configFile]);
    expect(res.code).toBe(11);
    expect(res.stdout).toMatch(/release-notes\/1\.0\.0\.html is missing/);
  }));

  it("config: releaseNotes \"page\" with releaseNotesUrl is a config error (exit 3)", () => slot(async () => {
    const ws = await workspace({ appcast: { releaseNotes: "page", releaseNotesUrl: "https://example.com/{version}.html" } });
    const res = await runCli(ws.publishArgs(await ws.plugin("1.0.0", 101), "1.0.0"));
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(/releaseNotes.*keep one/);
  }));
});

describe.concurrent("relcast verify on a signed feed", () => {
  it("finds a one-byte change in either appcast, a missing block, and a tampered or missing notes page (exit 11)", () => slot(async () => {
    const ws = await workspace({ appcast: { signedFeed: true, releaseNotes: "page" } });
    await publish(ws, "1.0.0", 101);
    const [canonical, pub] = feeds(ws) as [string, string];
    const verify = () => runCli(["verify", "--config", ws.configFile]);
    expect((await verify()).code).toBe(0);

    // Each appcast gets a one-byte change once and loses its block once; verify checks both appcasts in one run,
    // so one run has the change in one appcast and the cut in the other, and a second run the other way round.
    const before = await treeBytes(ws.storeDir);
    const originals = await Promise.all([canonical, pub].map((file) => readFile(file)));
    for (const [changed, cutOff] of [[0, 1], [1, 0]] as const) {
      const file = [canonical, pub][changed]!;
      // One byte inside the signed content (a build number), same length.
      await writeFile(file, Buffer.from(originals[changed]!.toString("utf8").replace("<sparkle:version>101<", "<sparkle:version>109<")));
      // The block cut off.
      await writeFile([canonical, pub][cutOff]!, originals[cutOff]!.subarray(0, originals[cutOff]!.indexOf("<!-- sparkle-signatures:")));
      const res = await verify();
      expect(res.code).toBe(11);
      expect(res.stdout + res.stderr, `one byte changed in ${file}`).toMatch(new RegExp(`${path.relative(ws.storeDir, file).replaceAll("/", "\\/")} is refused by apps that require a signed feed.*does not verify`));
      expect(res.stdout + res.stderr, `${[canonical, pub][cutOff]} cut before its block`).toMatch(new RegExp(`${path.relative(ws.storeDir, [canonical, pub][cutOff]!).replaceAll("/", "\\/")}[^\n]*has no signature block`));
      await Promise.all([canonical, pub].map((f, i) => writeFile(f, originals[i]!)));
    }
    // Byte for byte the store the first verify accepted: another verify would repeat that one.
    expect(await treeBytes(ws.storeDir), "the appcasts are put back").toEqual(before);

    const pageFile = path.join(ws.storeDir, "release-notes", "1.0.0.html");
    const page = await readFile(pageFile, "utf8");
    await writeFile(pageFile, page.replace("starts faster", "starts slower"));
    const tampered = await verify();
    expect(tampered.code).toBe(11);
    expect(tampered.stdout + tampered.stderr).toMatch(/sparkle:edSignature of release-notes\/1\.0\.0\.html does not verify/);
    await writeFile(pageFile, page + " ");
    expect((await verify()).stdout).toMatch(/sparkle:length \d+, but it is \d+ bytes/);
    await rm(pageFile);
    expect((await verify()).stdout).toMatch(/release-notes\/1\.0\.0\.html is missing/);
    await writeFile(pageFile, page);
    expect(await treeBytes(ws.storeDir), "the page is put back (the store the first verify accepted)").toEqual(before);
  }));
});

describe.concurrent("relcast sign <feed.xml>", () => {
  it("a signed publish killed before its site step leaves the state one change back: a warning, not a problem", () => slot(async () => {
    const ws = await workspace({ appcast: { signedFeed: true } });
    await publish(ws, "1.0.0", 101);
    const p = await ws.plugin("1.1.0", 112);
    const killed = await runCli([...ws.publishArgs(p, "1.1.0", ["--published-at", "2026-02-01T10:00:00.000Z"])], { env: { RELCAST_FAILPOINT: "before:site" } });
    expect(killed.signal).toBe("SIGKILL");
    const res = await runCli(["verify", "--config", ws.configFile]);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toMatch(/still hold the state before the last change \(they do not list 1\.1\.0 yet\)/);
    expect(pythonFeed(ws.key.publicKeyBase64, feeds(ws)[1]!)).toMatchObject({ signed: true });
  }));

  it("signs in place like sign_update, replaces an old block, and --verify catches a one-byte change (exit 10)", () => slot(async () => {
    const ws = await workspace();
    await publish(ws, "1.0.0", 101);
    const feed = path.join(ws.dir, "feed.xml");
    const unsigned = await readFile(feeds(ws)[0]!);
    await writeFile(feed, unsigned);
    const signed = await runCli(["sign", feed, "--ed-key-file", ws.keyFile]);
    expect(signed.code, signed.stderr).toBe(0);
    expect(signed.stdout).toBe("<!-- Updated signature inside feed.xml -->\n");
    const once = await readFile(feed);
    expect(once.subarray(0, unsigned.length).equals(unsigned)).toBe(true);
    expect(once.toString("utf8")).toMatch(BLOCK);
    expect(pythonFeed(ws.key.publicKeyBase64, feed)).toEqual({ signed: true, valid: true, lengthOk: true, blocks: 1, after: "-->\n" });
    expect((await runCli(["sign", "--verify", feed, "--public-key", ws.key.publicKeyBase64])).code).toBe(0);

    // Signing again replaces the block (one block, same bytes: Ed25519 is deterministic).
    expect((await runCli(["sign", feed, "-f", ws.keyFile, "--disable-signing-warning"])).code).toBe(0);
    expect((await readFile(feed)).equals(once)).toBe(true);

    // One byte changed in the content: --verify says so with E_SIGNATURE (exit 10).
    const flipped = Buffer.from(once);
    flipped[flipped.indexOf("<title>") + 1]! ^= 0x20;
    await writeFile(feed, flipped);
    const bad = await runCli(["sign", "--verify", feed, "--key-file", ws.keyFile]);
    expect(bad.code).toBe(10);
    expect(bad.stderr).toMatch(/is not validly signed: its edSignature does not verify/);
    // Re-signing the edited feed replaces the stale block.
    expect((await runCli(["sign", feed, "--key-file", ws.keyFile])).code).toBe(0);
    expect(pythonFeed(ws.key.publicKeyBase64, feed)).toMatchObject({ signed: true, valid: true, blocks: 1 });
    expect((await runCli(["sign", "--verify", feed, "--key-file", ws.keyFile])).code).toBe(0);

    // An unsigned feed fails --verify; an appcast takes no signature argument.
    await writeFile(feed, unsigned);
    expect(await runCli(["sign", "--verify", feed, "--key-file", ws.keyFile])).toMatchObject({ code: 10, stderr: expect.stringMatching(/has no signature block/) });
    expect((await runCli(["sign", "--verify", feed, "AAAA", "--key-file", ws.keyFile])).code).toBe(2);
    // A release-notes file's line uses sparkle:length (for <sparkle:releaseNotesLink>).
    const notes = path.join(ws.dir, "notes.html");
    await writeFile(notes, "<p>notes</p>\n");
    expect((await runCli(["sign", notes, "--key-file", ws.keyFile])).stdout).toMatch(/^sparkle:edSignature="[A-Za-z0-9+/]{86}==" sparkle:length="13"\n$/);
  }));
});
