import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { limit } from "../helpers/release-kit.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../helpers/workspace.js";

/**
 * Python's xml.etree (an XML parser independent of relcast's) reads one item
 * of the appcast: its children in order, and what Sparkle acts on for each
 * element relcast writes (SUAppcast.m / SUAppcastItem.m).
 */
const PY_ITEM = `
import json, sys, xml.etree.ElementTree as ET
U = "{http://www.andymatuschak.org/xml-namespaces/sparkle}"
X = "{http://www.w3.org/XML/1998/namespace}lang"
name = lambda tag: tag.replace(U, "sparkle:")
for item in ET.parse(sys.argv[1]).getroot().find("channel").findall("item"):
    if item.find(U + "shortVersionString").text != sys.argv[2]: continue
    T = lambda n: None if item.find(n) is None else item.find(n).text
    info = item.find(U + "informationalUpdate")
    print(json.dumps({
        "order": [name(c.tag) for c in item],
        "link": T("link"),
        "minimumUpdateVersion": T(U + "minimumUpdateVersion"),
        "ignoreSkippedUpgradesBelowVersion": T(U + "ignoreSkippedUpgradesBelowVersion"),
        "maximumSystemVersion": T(U + "maximumSystemVersion"),
        "minimumSystemVersion": T(U + "minimumSystemVersion"),
        "informational": None if info is None else [[name(c.tag), c.text] for c in info],
        "informationalText": None if info is None else (info.text or ""),
        "descriptions": [[d.get(X), d.text.strip()] for d in item.findall("description")],
        "notesLinks": [[l.get(X), l.text, l.get(U + "edSignature") is not None] for l in item.findall(U + "releaseNotesLink")],
    }))
`;

function pyItem(file: string, version: string): Record<string, any> {
  return JSON.parse(execFileSync("python3", ["-c", PY_ITEM, file, version]).toString()) as Record<string, any>;
}

async function writeNotes(ws: Workspace, name: string, text: string): Promise<string> {
  const file = path.join(ws.dir, name);
  await writeFile(file, text);
  return file;
}

// The two describes below have stores of their own and run at the same time; so do the refusals (each
// leaves the store as it was). At most three CLI runs of this file at once.
const slot = limit(3);

describe.concurrent("publish: the remaining Sparkle item elements and localized inline notes", () => {
  let ws: Workspace;
  let de: string;
  let pt: string;
  /** The 1.1.0 bundle every refusal offers (built once: the refusals run at once, and a rebuild would empty its folder under another run). */
  let refusedPlugin: { app: string; dmg: string; notes: string };
  const appcastFile = () => path.join(ws.storeDir, "releases", "appcast.xml");

  beforeAll(async () => {
    ws = await makeWorkspace();
    de = await writeNotes(ws, "notes.de.md", "- Startet schneller\n- Verbindet sich nach dem Ruhezustand wieder\n");
    pt = await writeNotes(ws, "notes.pt.md", "- Inicia mais rápido\n");
    const res = await runCli(ws.publishArgs(await ws.plugin("1.0.0", 100), "1.0.0", ["--quiet"]));
    expect(res.code, res.stderr).toBe(0);
    refusedPlugin = await ws.plugin("1.1.0", 110);
  });

  const refused = (flags: string[], exit: number, message: RegExp): Promise<void> => slot(async () => {
    const before = await snapshotTree(ws.storeDir);
    const res = await runCli(ws.publishArgs(refusedPlugin, "1.1.0", flags));
    expect(res.code, res.stderr).toBe(exit);
    expect(res.stderr).toMatch(message);
    expect(res.stderr).toMatch(/^ {2}fix: \S/m);
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });

  it("refuses an informational update without a link, naming both fixes (usage, exit 2)", async () => {
    await refused(["--informational"], 2, /1\.1\.0 is an informational update but has no link[\s\S]*fix: pass --link <url>.*or set appcast\.link in the config/);
    await refused(["--informational-update-versions", "100"], 2, /informational update but has no link/);
  });

  // Every refusal is unit-tested in test/domain/item-elements.test.ts; these go through the real CLI and store.
  it.each<[string, string[], RegExp]>([
    ["a <bound above the release's build", ["--link", "https://x.example/", "--informational-update-versions", "100,<111"], /--informational-update-versions 111 is above this release's own build 110/],
    ["--minimum-update-version with a semver", ["--minimum-update-version", "1.0"], /--minimum-update-version "1\.0" is not a build number/],
    ["--maximum-system-version below LSMinimumSystemVersion", ["--maximum-system-version", "11.6"], /--maximum-system-version 11\.6 is below the bundle's LSMinimumSystemVersion 12\.0/],
    ["a language tag Sparkle cannot match", ["--localized-notes", "de_DE=x.md"], /"de_DE" is not a language tag Sparkle can match/],
    ["localized notes behind a link relcast does not host", ["--release-notes-url", "https://n.example/{version}", "--localized-notes", "de=x.md"], /--localized-notes cannot be used with the release-notes link https:\/\/n\.example\/1\.1\.0/],
  ])("refuses %s (usage, exit 2)", async (_name, flags, message) => {
    await refused(flags.map((f) => f.replace("=x.md", `=${de}`)), 2, message);
  });

  it("checks a localized notes file as --notes is checked (input, exit 4)", async () => {
    const bad = await writeNotes(ws, "bad.de.md", "- Fehler \u001b[31mrot\n");
    await refused(["--localized-notes", `de=${bad}`], 4, /bad\.de\.md: line 1, column 10: character .*not allowed in XML 1\.0/);
    await refused(["--localized-notes", `de=${path.join(ws.dir, "missing.md")}`], 4, /cannot read notes file .*missing\.md \(ENOENT\)\n {2}fix: pass --localized-notes de= a Markdown file/);
  });

  const FLAGS = () => [
    "--link", "https://updates.example.com/releases/{version}", "--minimum-update-version", "100", "--minimum-autoupdate-version", "100",
    "--ignore-skipped-upgrades-below-version", "105", "--phased-rollout-interval", "3600", "--critical", "100",
    "--informational-update-versions", "105,<100,101", "--maximum-system-version", "15.9", "--full-release-notes-url", "https://updates.example.com/history",
    "--localized-notes", `pt-br=${pt}`, "--localized-notes", `de=${de}`,
  ];

  it.sequential("the dry run shows every new element in the appcast diff and writes nothing", async () => {
    const before = await snapshotTree(ws.storeDir);
    const res = await runCli(ws.publishArgs(await ws.plugin("1.1.0", 110), "1.1.0", [...FLAGS(), "--dry-run"]));
    expect(res.code, res.stderr).toBe(0);
    for (const line of [
      "<link>https://updates.example.com/releases/1.1.0</link>", "<sparkle:minimumUpdateVersion>100</sparkle:minimumUpdateVersion>",
      "<sparkle:ignoreSkippedUpgradesBelowVersion>105</sparkle:ignoreSkippedUpgradesBelowVersion>", "<sparkle:belowVersion>100</sparkle:belowVersion>",
      "<sparkle:maximumSystemVersion>15.9</sparkle:maximumSystemVersion>", '<description xml:lang="de">',
    ]) expect(res.stderr).toContain(line);
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });

  it.sequential("writes each element with Sparkle's syntax, in generate_appcast's order, and the record and catalog keep them", async () => {
    const res = await runCli(ws.publishArgs(await ws.plugin("1.1.0", 110), "1.1.0", [...FLAGS(), "--json"]));
    expect(res.code, res.stderr).toBe(0);
    const record = JSON.parse(res.stdout);
    expect(record.autoupdate).toMatchObject({
      link: "https://updates.example.com/releases/1.1.0", minimumUpdateVersion: "100", ignoreSkippedUpgradesBelowVersion: "105",
      maximumSystemVersion: "15.9", informationalUpdate: ["101", "105", "<100"],
    });
    expect(record.localizedReleaseNotes).toEqual([
      { lang: "de", markdown: "- Startet schneller\n- Verbindet sich nach dem Ruhezustand wieder\n" },
      { lang: "pt-BR", markdown: "- Inicia mais rápido\n" },
    ]);
    const catalog = JSON.parse(await readFile(path.join(ws.storeDir, "releases", "catalog.json"), "utf8"));
    const entry = catalog.versions.find((v: { version: string }) => v.version === "1.1.0");
    expect(entry.autoupdate.informationalUpdate).toEqual(["101", "105", "<100"]);
    expect(entry.localizedReleaseNotes.map((l: { lang: string }) => l.lang)).toEqual(["de", "pt-BR"]);

    const item = pyItem(appcastFile(), "1.1.0");
    // FeedXML.swift's order for a new item; maximumSystemVersion (no generate_appcast flag) after its minimum.
    expect(item.order).toEqual([
      "title", "pubDate", "link", "sparkle:fullReleaseNotesLink", "sparkle:minimumUpdateVersion", "sparkle:minimumAutoupdateVersion",
      "sparkle:ignoreSkippedUpgradesBelowVersion", "sparkle:phasedRolloutInterval", "sparkle:criticalUpdate", "sparkle:informationalUpdate",
      "sparkle:version", "sparkle:shortVersionString", "sparkle:minimumSystemVersion", "sparkle:maximumSystemVersion",
      "description", "description", "description", "enclosure",
    ]);
    expect(item).toMatchObject({
      link: "https://updates.example.com/releases/1.1.0", minimumUpdateVersion: "100", ignoreSkippedUpgradesBelowVersion: "105",
      maximumSystemVersion: "15.9", minimumSystemVersion: "12.0",
      // Exact builds are <sparkle:version>, a "<" entry is a <sparkle:belowVersion> with the bare build.
      informational: [["sparkle:version", "101"], ["sparkle:version", "105"], ["sparkle:belowVersion", "100"]],
      notesLinks: [],
    });
    expect(item.descriptions.map((d: string[]) => d[0])).toEqual(["en", "de", "pt-BR"]);
    expect(item.descriptions[0][1]).toContain("Bridge 1.1.0 starts faster");
    expect(item.descriptions[1][1]).toBe("<ul>\n<li>Startet schneller</li>\n<li>Verbindet sich nach dem Ruhezustand wieder</li>\n</ul>");
    expect(item.descriptions[2][1]).toContain("Inicia mais rápido");
    // The release before is untouched: none of the new elements, one description without xml:lang.
    expect(pyItem(appcastFile(), "1.0.0")).toMatchObject({ link: null, informational: null, maximumSystemVersion: null, descriptions: [[null, expect.stringContaining("Bridge 1.0.0")]] });
  });

  it.sequential("the downloads page shows the default-language notes", async () => {
    const page = await readFile(path.join(ws.storeDir, "index.html"), "utf8");
    expect(page).toContain("Bridge 1.1.0 starts faster");
    expect(page).not.toContain("Startet schneller");
  });

  it.sequential("--informational is the empty element: informational for every install", async () => {
    const res = await runCli(ws.publishArgs(await ws.plugin("1.2.0", 120), "1.2.0", ["--informational", "--link", "https://updates.example.com/r/{version}", "--quiet"]));
    expect(res.code, res.stderr).toBe(0);
    expect(pyItem(appcastFile(), "1.2.0")).toMatchObject({ informational: [], informationalText: "", link: "https://updates.example.com/r/1.2.0" });
    expect(await readFile(appcastFile(), "utf8")).toContain("<sparkle:informationalUpdate/>");
  });

  it.sequential("a re-run with the same flags is a no-op; with another value of any element it is a conflict (exit 8)", async () => {
    const p = await ws.plugin("1.1.0", 110);
    const same = await runCli(ws.publishArgs(p, "1.1.0", [...FLAGS(), "--quiet"]));
    expect(same.code, same.stderr).toBe(0);
    const before = await snapshotTree(ws.storeDir);
    const swap = (flag: string, value: string) => { const f = FLAGS(); f[f.indexOf(flag) + 1] = value; return f; };
    // Each conflicting re-run is refused before it writes anything: they run at once, each its own CLI process.
    await Promise.all([...([
      [swap("--maximum-system-version", "15.8"), "maximumSystemVersion"],
      [swap("--informational-update-versions", "105,101"), "informationalUpdate"],
      [swap("--link", "https://updates.example.com/other/{version}"), "link"],
      [swap("--minimum-update-version", "99"), "minimumUpdateVersion"],
      [swap("--ignore-skipped-upgrades-below-version", "104"), "ignoreSkippedUpgradesBelowVersion"],
    ] as const).map(([flags, field]) => slot(async () => {
      const res = await runCli(ws.publishArgs(p, "1.1.0", [...flags]));
      expect(res.code, res.stderr).toBe(8);
      expect(res.stderr).toContain(`already published with other appcast options (${field})`);
    })), slot(async () => {
      const withoutDe = FLAGS().slice(0, -2);
      const res = await runCli(ws.publishArgs(p, "1.1.0", withoutDe));
      expect(res.code, res.stderr).toBe(8);
      expect(res.stderr).toContain("localizedReleaseNotes");
    })]);
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });

  it.sequential("relcast rebuild writes the same appcast bytes from the records", async () => {
    const before = await readFile(appcastFile(), "utf8");
    const res = await runCli(["rebuild", "--config", ws.configFile]);
    expect(res.code, res.stderr).toBe(0);
    expect(await readFile(appcastFile(), "utf8")).toBe(before);
  });

  it.sequential("verify passes, and fails when the feed's element disagrees with the record", async () => {
    const ok = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    const good = await readFile(appcastFile(), "utf8");
    // Each tamper is [from, to, what verify must say]. verify lists every disagreement of every item, so the
    // independent tampers go into one feed and one verify; the language swap cannot share a feed with the edited
    // German text (it removes that description), so it has a verify of its own.
    const tamper = async (changes: Array<[string, string, RegExp]>) => {
      let feed = good;
      for (const [from, to] of changes) {
        expect(feed).toContain(from);
        feed = feed.replace(from, to);
      }
      await writeFile(appcastFile(), feed);
      const res = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
      expect(res.code, res.stdout + res.stderr).toBe(11);
      for (const [from, to, expected] of changes) expect(res.stdout + res.stderr, `${from} -> ${to}`).toMatch(expected);
    };
    try {
      await tamper([
        ["<sparkle:maximumSystemVersion>15.9<", "<sparkle:maximumSystemVersion>16.0<", /sparkle:maximumSystemVersion is "16\.0" but the catalog says "15\.9"/],
        ["<sparkle:minimumUpdateVersion>100<", "<sparkle:minimumUpdateVersion>90<", /sparkle:minimumUpdateVersion is "90" but the catalog says "100"/],
        ["<sparkle:ignoreSkippedUpgradesBelowVersion>105<", "<sparkle:ignoreSkippedUpgradesBelowVersion>1<", /sparkle:ignoreSkippedUpgradesBelowVersion is "1"/],
        ["<sparkle:belowVersion>100</sparkle:belowVersion>", "<sparkle:version>100</sparkle:version>", /sparkle:informationalUpdate is "100,101,105" but the catalog says "101,105,<100"/],
        ["<link>https://updates.example.com/releases/1.1.0</link>", "", /(?=[\s\S]*appcast link is missing but the catalog says "https:\/\/updates\.example\.com\/releases\/1\.1\.0")[\s\S]*informationalUpdate but no http\(s\) <link>/],
        ["Startet schneller", "Startet langsamer", /appcast <description xml:lang="de"> is not the record's de notes as relcast renders them/],
        ["<sparkle:informationalUpdate/>", "", /sparkle:informationalUpdate is missing but the catalog says ""/],
      ]);
      await tamper([['<description xml:lang="de">', '<description xml:lang="fr">', /<description> languages is "en, fr, pt-BR" but the catalog says "en, de, pt-BR"/]]);
    } finally {
      await writeFile(appcastFile(), good);
    }
  });
});

/** Python `cryptography`: each releaseNotesLink's signature over the page the store holds, and the page's lang. */
const PY_PAGES = `
import base64, json, os, sys, re
import xml.etree.ElementTree as ET
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
S = "{http://www.andymatuschak.org/xml-namespaces/sparkle}"
X = "{http://www.w3.org/XML/1998/namespace}lang"
pub = Ed25519PublicKey.from_public_bytes(base64.b64decode(sys.argv[1]))
data = open(sys.argv[2], "rb").read()
root = ET.fromstring(data[:data.rfind(b"<!-- sparkle-signatures:")])
out = []
for link in root.iter(S + "releaseNotesLink"):
    page = open(os.path.join(sys.argv[3], link.text.split("https://updates.example.com/", 1)[1]), "rb").read()
    try:
        pub.verify(base64.b64decode(link.get(S + "edSignature")), page); valid = True
    except Exception:
        valid = False
    out.append({"lang": link.get(X), "url": link.text, "valid": valid, "lengthOk": link.get(S + "length") == str(len(page)),
                "htmlLang": re.search(rb'<html lang="([^"]+)"', page).group(1).decode(), "text": page.decode()})
print(json.dumps(out))
`;

describe.concurrent("publish: localized notes pages on a signed feed, link from the config", () => {
  it("hosts and signs a page per language, links each with xml:lang, verify checks them", () => slot(async () => {
    const ws = await makeWorkspace({ appcast: { releaseNotes: "page", signedFeed: true, link: "https://updates.example.com/releases/{version}" } });
    const de = await writeNotes(ws, "de.md", "- Startet schneller\n");
    const fr = await writeNotes(ws, "fr.md", "- Démarre plus vite\n");
    const res = await runCli(ws.publishArgs(await ws.plugin("2.0.0", 200), "2.0.0", ["--informational", "--localized-notes", `fr=${fr}`, "--localized-notes", `de=${de}`, "--quiet"]));
    expect(res.code, res.stderr).toBe(0);
    const feed = path.join(ws.storeDir, "releases", "appcast.xml");
    const links = JSON.parse(execFileSync("python3", ["-c", PY_PAGES, ws.key.publicKeyBase64, feed, ws.storeDir]).toString()) as Array<Record<string, any>>;
    expect(links.map(({ text: _t, ...l }) => l)).toEqual([
      { lang: "en", url: "https://updates.example.com/release-notes/2.0.0.html", valid: true, lengthOk: true, htmlLang: "en" },
      { lang: "de", url: "https://updates.example.com/release-notes/de/2.0.0.html", valid: true, lengthOk: true, htmlLang: "de" },
      { lang: "fr", url: "https://updates.example.com/release-notes/fr/2.0.0.html", valid: true, lengthOk: true, htmlLang: "fr" },
    ]);
    expect(links[1]!.text).toContain("<li>Startet schneller</li>");
    expect(links[2]!.text).toContain("<li>Démarre plus vite</li>");
    // The config's link template is the default <link>, which an informational update needs.
    const text = await readFile(feed, "utf8");
    expect(text).toContain("<link>https://updates.example.com/releases/2.0.0</link>");
    expect(text).toContain("<sparkle:informationalUpdate/>");
    expect(text).not.toMatch(/<item>[\s\S]*<description/);

    const verify = () => runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
    const ok = await verify();
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    const dePage = path.join(ws.storeDir, "release-notes", "de", "2.0.0.html");
    await writeFile(dePage, links[1]!.text.replace("schneller", "langsamer"));
    const bad = await verify();
    expect(bad.code).toBe(11);
    expect(bad.stdout + bad.stderr).toMatch(/release-notes\/de\/2\.0\.0\.html does not verify over its bytes|sparkle:edSignature of release-notes\/de\/2\.0\.0\.html does not verify/);
    expect(bad.stdout + bad.stderr).toContain("release-notes/de/2.0.0.html is not the de release-notes page of 2.0.0");
    await writeFile(dePage, links[1]!.text);

    // A record edited to point its notes off-site: the off-site page would be neither signed nor checked.
    const recordFile = path.join(ws.storeDir, "releases/2.0.0/release.json");
    const record = await readFile(recordFile, "utf8");
    const edit = async (change: (au: any) => void) => {
      const r = JSON.parse(record);
      change(r.autoupdate);
      await writeFile(recordFile, JSON.stringify(r, null, 2) + "\n");
      return runCli(["rebuild", "--config", ws.configFile, "--key-file", ws.keyFile]);
    };
    const localized = await edit((au) => { au.localizedReleaseNotesLinks[0].url = "https://evil.example/de.html"; });
    expect(localized.code).not.toBe(0);
    expect(localized.stdout + localized.stderr).toContain("must be the page relcast hosts for de (https://updates.example.com/release-notes/de/2.0.0.html)");
    const rebuilt = await edit((au) => { au.releaseNotesLink = "https://evil.example/n.html"; });
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    const offSite = await verify();
    expect(offSite.code).toBe(11);
    expect(offSite.stdout).toContain("the release-notes link https://evil.example/n.html is not the page relcast hosts (https://updates.example.com/release-notes/2.0.0.html)");
  }));
});
