import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyChangeProblems } from "../../src/verify/bundle-id-check.js";
import { runCli } from "../helpers/run-cli.js";
import { pluginIn } from "../helpers/release-kit.js";
import { makeWorkspace, newKey, snapshotTree, type Workspace } from "../helpers/workspace.js";

/**
 * A publish is refused before anything is written when installed copies
 * of the previous release could not take it: another signing key (unless
 * --allow-key-change), another CFBundleIdentifier, or an SUFeedURL that is
 * not the public appcast.
 */
// The refusals leave the store as it was and the fourth test has a store of its own: they run at once, each
// bundle in a folder of its own. The key change publishes into the shared store, so it runs after them.
describe.concurrent("continuity with earlier releases", () => {
  let ws: Workspace;
  let before: Record<string, string>;
  const FEED = "https://updates.example.com/api/v1/plugins/bridge-plugin/appcast.xml";
  const editPlist = async (app: string, edit: (xml: string) => string) => {
    const file = path.join(app, "Contents", "Info.plist");
    await writeFile(file, edit(await readFile(file, "utf8")));
  };
  const withFeed = (url: string) => (xml: string) => xml.replace("</dict>", `\t<key>SUFeedURL</key>\n\t<string>${url}</string>\n</dict>`);

  beforeAll(async () => {
    ws = await makeWorkspace();
    const p = await ws.plugin("1.0.0", 100);
    await editPlist(p.app, withFeed(FEED));
    const res = await runCli(ws.publishArgs(p, "1.0.0"));
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).not.toMatch(/has no SUFeedURL/);
    before = await snapshotTree(ws.storeDir);
  });
  afterAll(() => rm(ws.dir, { recursive: true, force: true }));

  async function otherKeyArgs(version: string, build: number, more: string[] = []) {
    const other = newKey();
    const keyFile = path.join(ws.dir, `other-${version}.txt`);
    await writeFile(keyFile, other.seedBase64 + "\n", { mode: 0o600 });
    const p = await pluginIn(ws, `other-key-${version}`, version, build, other.publicKeyBase64);
    await editPlist(p.app, withFeed(FEED));
    return ws.publishArgs(p, version, more).map((a) => (a === ws.keyFile ? keyFile : a));
  }

  it("refuses another signing key than the previous release's bundle carries (exit 6), writing nothing", async () => {
    const res = await runCli(await otherKeyArgs("1.1.0", 110));
    expect(res.code, res.stderr).toBe(6);
    expect(res.stderr).toMatch(/1\.0\.0 \(the newest earlier release with a key\) carries SUPublicEDKey [\s\S]*--allow-key-change/);
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });

  it("refuses another CFBundleIdentifier (exit 7) and an SUFeedURL that is not the public appcast (exit 7)", async () => {
    const renamed = await pluginIn(ws, "renamed", "1.1.0", 110);
    await editPlist(renamed.app, (xml) => withFeed(FEED)(xml.replace("com.example.bridge-plugin", "com.example.other")));
    const id = await runCli(ws.publishArgs(renamed, "1.1.0"));
    expect(id.code, id.stderr).toBe(7);
    expect(id.stderr).toMatch(/CFBundleIdentifier is com\.example\.other, but 1\.0\.0 \(the previous release\) is com\.example\.bridge-plugin/);
    const wrongFeed = await pluginIn(ws, "wrong-feed", "1.1.0", 110);
    await editPlist(wrongFeed.app, withFeed("https://old.example.com/appcast.xml"));
    const feed = await runCli(ws.publishArgs(wrongFeed, "1.1.0"));
    expect(feed.code, feed.stderr).toBe(7);
    expect(feed.stderr).toMatch(new RegExp(`set SUFeedURL to ${FEED.replaceAll(".", "\\.")}`));
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });

  it("warns about a missing SUFeedURL, naming the value to add", async () => {
    const dry = await runCli([...ws.publishArgs(await pluginIn(ws, "no-feed", "1.1.0", 110), "1.1.0"), "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(`add SUFeedURL = ${FEED}`);
  });

  it("looks past a release without SUPublicEDKey, and refuses when an earlier bundle cannot be read (exit 9)", async () => {
    const other = await makeWorkspace();
    try {
      const first = await other.plugin("1.0.0", 100);
      expect((await runCli(other.publishArgs(first, "1.0.0"))).code).toBe(0);
      const keyless = await other.plugin("1.1.0", 110, { publicKey: null });
      expect((await runCli(other.publishArgs(keyless, "1.1.0"))).code).toBe(0);
      const k2 = newKey();
      const keyFile = path.join(other.dir, "k2.txt");
      await writeFile(keyFile, k2.seedBase64 + "\n", { mode: 0o600 });
      const rotated = other.publishArgs(await other.plugin("1.2.0", 120, { publicKey: k2.publicKeyBase64 }), "1.2.0").map((a) => (a === other.keyFile ? keyFile : a));
      const refused = await runCli(rotated);
      expect(refused.code, refused.stderr).toBe(6);
      expect(refused.stderr).toMatch(/1\.0\.0 \(the newest earlier release with a key\)/);
      await rm(path.join(other.storeDir, "releases", "1.1.0", "bridge-plugin-1.1.0.zip"));
      const unreadable = await runCli(other.publishArgs(await other.plugin("1.2.0", 120), "1.2.0"));
      expect(unreadable.code, unreadable.stderr).toBe(9);
      expect(unreadable.stderr).toMatch(/cannot read the bundle of 1\.1\.0[\s\S]*relcast verify/);
    } finally {
      await rm(other.dir, { recursive: true, force: true });
    }
  });

  it.sequential("publishes a deliberate key change with --allow-key-change, records it, and verify accepts it", async () => {
    const res = await runCli(await otherKeyArgs("1.2.0", 120, ["--allow-key-change"]));
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/--allow-key-change: 1\.0\.0 carries SUPublicEDKey/);
    const record = JSON.parse(await readFile(path.join(ws.storeDir, "releases", "1.2.0", "release.json"), "utf8"));
    expect(record.autoupdate.keyChangeAllowed).toBe(true);
    const verify = await runCli(["verify", "--config", ws.configFile]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });

  it("verify names a key change that was not published as one", () => {
    const releases = [
      { version: "1.0.0", build: 100, publicEdKey: "A", keyChangeAllowed: false },
      { version: "1.2.0", build: 120, publicEdKey: "B", keyChangeAllowed: false },
      { version: "1.1.0", build: 110, publicEdKey: "A", keyChangeAllowed: false },
      { version: "1.3.0", build: 130, publicEdKey: "C", keyChangeAllowed: true },
    ];
    expect(keyChangeProblems(releases)).toEqual([["1.2.0", expect.stringMatching(/SUPublicEDKey is B, but 1\.1\.0 \(the build before\) carries A/)]]);
  });
});
