import "../helpers/python-without-shim.js"; // python3 and the aws cli without a version manager's shim (see there)
import { execFileSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limit, pluginIn } from "../helpers/release-kit.js";
import { runCli as runCliNow } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

/** Each feed as Sparkle reads it, by Python's expat (xml.etree): one entry per item, a line of JSON per file (one interpreter for the list). */
const PY_ITEMS = `
import json, sys, xml.etree.ElementTree as ET
S = "{http://www.andymatuschak.org/xml-namespaces/sparkle}"
for f in sys.argv[1:]:
    out = []
    for item in ET.parse(f).getroot().iter("item"):
        e = item.find("enclosure")
        d = item.find(S + "deltas")
        out.append({"short": item.findtext(S + "shortVersionString"), "version": item.findtext(S + "version"),
            "url": e.get("url"), "length": e.get("length"), "sig": e.get(S + "edSignature"),
            "deltas": [] if d is None else [[x.get("url"), x.get("length"), x.get(S + "edSignature")] for x in d.findall("enclosure")]})
    print(json.dumps(out))
`;

/** Every link target of a page, by Python's html.parser (a browser-like tokenizer relcast did not write). */
const PY_LINKS = `
import json, sys
from html.parser import HTMLParser
class Links(HTMLParser):
    def __init__(self):
        super().__init__(); self.links = []
    def handle_starttag(self, tag, attrs):
        self.links += [v for k, v in attrs if k in ("href", "src")]
p = Links(); p.feed(open(sys.argv[1], encoding="utf-8").read()); print(json.dumps(p.links))
`;

/** Python cryptography's verdict on an Ed25519 signature over each file: "ok" or "bad", a line per file (one interpreter for the list). */
const PY_VERIFY = `
import base64, sys
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
key = Ed25519PublicKey.from_public_bytes(base64.b64decode(sys.argv[1]))
for f in sys.argv[3:]:
    try:
        key.verify(base64.b64decode(sys.argv[2]), open(f, "rb").read()); print("ok")
    except InvalidSignature:
        print("bad")
`;

interface Item { short: string; version: string; url: string; length: string; sig: string; deltas: string[][] }
const itemsOfAll = (...files: string[]): Item[][] => execFileSync("python3", ["-c", PY_ITEMS, ...files]).toString().trim().split("\n").map((line) => JSON.parse(line));
const itemsOf = (file: string): Item[] => itemsOfAll(file)[0]!;
const linksOf = (file: string): string[] => JSON.parse(execFileSync("python3", ["-c", PY_LINKS, file]).toString());

const APPCAST = "api/v1/plugins/bridge-plugin/appcast.xml";
const CATALOG = "api/v1/plugins/bridge-plugin/releases.json";
const DELTA = "downloads/bridge-plugin-1.2.0-from-1.1.0.delta";
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

// The tests each verify a copy of their own and run at the same time; at most three CLI runs of this file at once
// (each waits on its child). Only the three publishes in beforeAll run one after the other.
const slot = limit(3);
const runCli = (...args: Parameters<typeof runCliNow>) => slot(() => runCliNow(...args));

describe.concurrent("verify checks what installed copies and people read: the public feeds, pages and delta copies", () => {
  let ws: Workspace;
  let copies: string;
  let n = 0;
  const records = new Map<string, Record<string, any>>();

  beforeAll(async () => {
    ws = await makeWorkspace({ deltas: { maximum: 1 } });
    copies = await mkdtemp(path.join(ws.dir, "copies-"));
    for (const [version, build] of [["1.0.0", 100], ["1.1.0", 110], ["1.2.0", 120]] as const) {
      const res = await runCli(ws.publishArgs(await ws.plugin(version, build), version, ["--json"]));
      expect(res.code, res.stderr).toBe(0);
      records.set(version, JSON.parse(res.stdout));
    }
    expect(records.get("1.2.0")!.autoupdate.deltas.map((d: { fromVersion: string }) => d.fromVersion)).toEqual(["1.1.0"]);
  }, 300_000);
  afterAll(async () => {
    await rm(ws.dir, { recursive: true, force: true });
  });

  async function copyStore(from = ws.storeDir): Promise<string> {
    const dir = path.join(copies, `store-${n++}`);
    await cp(from, dir, { recursive: true });
    return dir;
  }
  const verify = (store: string) => runCli(["verify", "--config", ws.configFile, "--store", `file://${store}`, "--public-key", ws.key.publicKeyBase64]);
  const verifyBare = (store: string) => runCli(["verify", "--store", `file://${store}`], { cwd: copies });
  async function edit(store: string, key: string, change: (text: string) => string): Promise<void> {
    const file = path.join(store, key);
    const before = await readFile(file, "utf8");
    const after = change(before);
    expect(after, `the edit of ${key} changed nothing`).not.toBe(before);
    await writeFile(file, after);
  }
  async function expectProblem(store: string, ...problems: RegExp[]): Promise<string> {
    const res = await verify(store);
    expect(res.code, res.stdout + res.stderr).toBe(11);
    expect(res.stderr).toMatch(/verify found problems in .*\bsite\b/);
    for (const p of problems) expect(res.stdout).toMatch(p);
    return res.stdout;
  }
  const sig = (v: string) => records.get(v)!.autoupdate.edSignature as string;
  const item = (xml: string, version: string) => {
    const m = xml.match(new RegExp(`<item>(?:(?!</item>)[\\s\\S])*<sparkle:shortVersionString>${esc(version)}</sparkle:shortVersionString>[\\s\\S]*?</item>`));
    return m![0];
  };

  it("passes the good store: every public file is the canonical one or rendered from it", async () => {
    const res = await verify(ws.storeDir);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).not.toContain("warnings:");
    const bare = await verifyBare(ws.storeDir);
    expect(bare.code, bare.stdout + bare.stderr).toBe(0);
    expect(bare.stdout).not.toContain("warnings:");
  });

  describe("the public appcast", () => {
    it.each([
      {
        name: "one sparkle:version raised (every install would 'update' to the old 1.0.0 zip)",
        change: (xml: string) => xml.replace(item(xml, "1.0.0"), item(xml, "1.0.0").replace("<sparkle:version>100</sparkle:version>", "<sparkle:version>999</sparkle:version>")),
        seen: (items: Item[]) => expect(items.find((i) => i.short === "1.0.0")!.version).toBe("999"),
        problems: [/site: api\/v1\/plugins\/bridge-plugin\/appcast\.xml: 1\.0\.0: appcast sparkle:version is "999" but the catalog says "100"/],
      },
      {
        name: "every item deleted",
        change: (xml: string) => xml.replace(/\s*<item>[\s\S]*?<\/item>/g, ""),
        seen: (items: Item[]) => expect(items).toEqual([]),
        problems: [/appcast\.xml: 1\.2\.0: the appcast has no item for 1\.2\.0/, /appcast\.xml: 1\.0\.0: the appcast has no item for 1\.0\.0/],
      },
      {
        name: "an item added",
        change: (xml: string) => xml.replace("<item>", `${item(xml, "1.1.0").replace(/1\.1\.0/g, "9.9.9").replace("<sparkle:version>110<", "<sparkle:version>999<")}\n    <item>`),
        seen: (items: Item[]) => expect(items.map((i) => i.short)).toEqual(["9.9.9", "1.2.0", "1.1.0", "1.0.0"]),
        problems: [/appcast\.xml: the appcast offers 9\.9\.9, which the catalog does not list/],
      },
      {
        name: "an enclosure on another host",
        change: (xml: string) => xml.replace("https://updates.example.com/downloads/bridge-plugin-1.2.0.zip", "https://evil.example.net/downloads/bridge-plugin-1.2.0.zip"),
        seen: (items: Item[]) => expect(items[0]!.url).toBe("https://evil.example.net/downloads/bridge-plugin-1.2.0.zip"),
        problems: [/appcast\.xml: 1\.2\.0: enclosure url https:\/\/evil\.example\.net\/downloads\/bridge-plugin-1\.2\.0\.zip is not https:\/\/updates\.example\.com\/downloads\/bridge-plugin-1\.2\.0\.zip/],
      },
      {
        name: "an enclosure length changed",
        change: (xml: string) => xml.replace(item(xml, "1.1.0"), item(xml, "1.1.0").replace(`length="${records.get("1.1.0")!.autoupdate.sizeBytes}"`, `length="${records.get("1.1.0")!.autoupdate.sizeBytes + 7}"`)),
        seen: (items: Item[]) => expect(items[1]!.length).toBe(String(records.get("1.1.0")!.autoupdate.sizeBytes + 7)),
        problems: [/appcast\.xml: 1\.1\.0: appcast enclosure length is "\d+" but the catalog says "\d+"/],
      },
      {
        name: "an enclosure signature swapped for another release's",
        change: (xml: string) => xml.replace(`sparkle:edSignature="${sig("1.2.0")}"`, `sparkle:edSignature="${sig("1.1.0")}"`),
        seen: (items: Item[]) => expect(items[0]!.sig).toBe(sig("1.1.0")),
        problems: [/appcast\.xml: 1\.2\.0: appcast enclosure sparkle:edSignature is "[^"]+" but the catalog says/],
      },
      {
        name: "a delta enclosure on another host",
        change: (xml: string) => xml.replace("https://updates.example.com/downloads/bridge-plugin-1.2.0-from-1.1.0.delta", "https://evil.example.net/downloads/bridge-plugin-1.2.0-from-1.1.0.delta"),
        seen: (items: Item[]) => expect(items[0]!.deltas[0]![0]).toBe("https://evil.example.net/downloads/bridge-plugin-1.2.0-from-1.1.0.delta"),
        problems: [/appcast\.xml: 1\.2\.0: appcast delta from 1\.1\.0: url is "https:\/\/evil\.example\.net\/[^"]+" but the catalog says/, /delta from 1\.1\.0: url https:\/\/evil\.example\.net\/\S+ is not https:\/\/updates\.example\.com\/downloads\/bridge-plugin-1\.2\.0-from-1\.1\.0\.delta/],
      },
    ])("$name: exit 11, naming the difference (expat reads the change)", async ({ change, seen, problems }) => {
      const store = await copyStore();
      await edit(store, APPCAST, change);
      seen(itemsOf(path.join(store, APPCAST)));
      const out = await expectProblem(store, ...problems);
      expect(out).not.toMatch(/^feed: FAIL/m);
    });

    it("a public appcast with the same items in other bytes (a comment added) is still not the canonical one", async () => {
      const store = await copyStore();
      await edit(store, APPCAST, (xml) => xml.replace("<channel>", "<channel><!-- mirrored -->"));
      const [tampered, canonical] = itemsOfAll(path.join(store, APPCAST), path.join(ws.storeDir, "releases", "appcast.xml"));
      expect(canonical!.length).toBe(3);
      expect(tampered).toEqual(canonical);
      await expectProblem(store, /site: api\/v1\/plugins\/bridge-plugin\/appcast\.xml differs from what relcast writes \(line 3: .*<!-- mirrored -->/);
    });
  });

  describe("the public catalog", () => {
    const editCatalog = (store: string, change: (c: Record<string, any>) => void) =>
      edit(store, CATALOG, (text) => {
        const c = JSON.parse(text);
        change(c);
        return JSON.stringify(c, null, 2) + "\n";
      });

    it("an entry's edSignature changed: exit 11 (the downloads still hash right, so this passed before)", async () => {
      const store = await copyStore();
      await editCatalog(store, (c) => { c.versions.find((r: any) => r.version === "1.1.0").autoupdate.edSignature = sig("1.0.0"); });
      await expectProblem(store, /site: api\/v1\/plugins\/bridge-plugin\/releases\.json differs from releases\/catalog\.json and is not the catalog as it was before the last publish, yank or unyank: its entry of 1\.1\.0 differs from the catalog's in autoupdate\.edSignature/);
    });

    it("two releases left out (no single publish leaves that): exit 11", async () => {
      const store = await copyStore();
      await editCatalog(store, (c) => { c.versions = c.versions.slice(2); c.count = 1; });
      await expectProblem(store, /releases\.json differs from releases\/catalog\.json .*: it lists 1 releases; the catalog lists 3/);
    });

    it("a release listed twice: exit 11", async () => {
      const store = await copyStore();
      await editCatalog(store, (c) => { c.versions.unshift(c.versions[0]); c.count = 4; });
      await expectProblem(store, /releases\.json differs from releases\/catalog\.json .*: it lists 4 releases; the catalog lists 3/);
    });

    it("the same releases in another layout: exit 11", async () => {
      const store = await copyStore();
      await edit(store, CATALOG, (text) => JSON.stringify(JSON.parse(text)));
      await expectProblem(store, /releases\.json differs from releases\/catalog\.json .*: it holds the same releases in another layout/);
    });
  });

  describe("index.html and changelog.html", () => {
    it.each([
      ["index.html", /site: index\.html is missing/],
      ["changelog.html", /site: changelog\.html is missing/],
    ])("a missing %s: exit 11", async (key, problem) => {
      const store = await copyStore();
      await rm(path.join(store, key));
      await expectProblem(store, problem);
    });

    it("every public feed and page deleted, the download copies left (not a store from before the site): exit 11", async () => {
      const store = await copyStore();
      for (const key of ["api", "index.html", "changelog.html", "downloads/bridge-plugin-latest.json"]) await rm(path.join(store, key), { recursive: true });
      const out = await expectProblem(store, /site: api\/v1\/plugins\/bridge-plugin\/releases\.json is missing/, /site: api\/v1\/plugins\/bridge-plugin\/appcast\.xml is missing/, /site: index\.html is missing/, /site: changelog\.html is missing/);
      expect(out).not.toContain("no public site");
    });

    it("a download link pointed at another host: exit 11 (html.parser sees the new link)", async () => {
      const store = await copyStore();
      await edit(store, "index.html", (html) => html.replace('href="downloads/bridge-plugin-1.1.0.dmg"', 'href="https://evil.example.net/bridge-plugin-1.1.0.dmg"'));
      const links = linksOf(path.join(store, "index.html"));
      expect(links).toContain("https://evil.example.net/bridge-plugin-1.1.0.dmg");
      expect(links).not.toContain("downloads/bridge-plugin-1.1.0.dmg");
      await expectProblem(store,
        /site: index\.html links https:\/\/evil\.example\.net\/bridge-plugin-1\.1\.0\.dmg, which the records do not name/,
        /site: index\.html lacks the link downloads\/bridge-plugin-1\.1\.0\.dmg/);
    });

    it("a link in another quoting, unquoted: exit 11", async () => {
      const store = await copyStore();
      await edit(store, "index.html", (html) => html.replace('href="downloads/bridge-plugin-1.0.0.zip"', "href=https://evil.example.net/x.zip"));
      expect(linksOf(path.join(store, "index.html"))).toContain("https://evil.example.net/x.zip");
      await expectProblem(store, /site: index\.html links https:\/\/evil\.example\.net\/x\.zip, which the records do not name/);
    });

    it("a checksum changed: exit 11", async () => {
      const store = await copyStore();
      const real = records.get("1.0.0")!.sha256 as string;
      const fake = real.replace(/^./, real[0] === "0" ? "1" : "0");
      await edit(store, "index.html", (html) => html.replace(real, fake));
      await expectProblem(store, new RegExp(`site: index\\.html shows SHA-256 ${fake}, which no record has`), new RegExp(`site: index\\.html does not show SHA-256 ${real}`));
    });

    it("other text on the page: exit 11 with where it differs", async () => {
      const store = await copyStore();
      await edit(store, "index.html", (html) => html.replace("<h1>Bridge Plugin</h1>", "<h1>Bridge Plugin (get it elsewhere)</h1>"));
      await expectProblem(store, /site: index\.html differs from the page relcast renders from the catalog \(line \d+: .*get it elsewhere/);
    });

    it("a link added to the changelog page: exit 11", async () => {
      const store = await copyStore();
      await edit(store, "changelog.html", (html) => html.replace("</body>", '<a href="https://evil.example.net/get.dmg">Download</a></body>'));
      expect(linksOf(path.join(store, "changelog.html"))).toContain("https://evil.example.net/get.dmg");
      await expectProblem(store, /site: changelog\.html links https:\/\/evil\.example\.net\/get\.dmg, which the records do not name/);
    });

    it("from --store alone (no config) the pages are compared with the appcast's display name and publisher", async () => {
      const store = await copyStore();
      await edit(store, "index.html", (html) => html.replace("<p class=\"by\">by Example Tools</p>", "<p class=\"by\">by Someone Else</p>"));
      const res = await verifyBare(store);
      expect(res.code, res.stdout).toBe(11);
      expect(res.stdout).toMatch(/site: index\.html differs from the page relcast renders from the catalog \(line \d+: .*Someone Else/);
    });
  });

  it("objects on the public site that no release names: exit 11, under the plugin's names and beside them", async () => {
    const store = await copyStore();
    const put = async (key: string, text: string) => {
      await mkdir(path.dirname(path.join(store, key)), { recursive: true });
      await writeFile(path.join(store, key), text);
    };
    await put("downloads/bridge-plugin-9.9.9.dmg", "evil");
    await put("downloads/bridge-plugin-1.2.0-from-0.9.0.delta", "evil");
    await put("release-notes/1.2.0.html", "<script>x</script>");
    await put("api/v1/plugins/bridge-plugin/extra.json", "{}");
    await put("api/v1/plugins/other/appcast.xml", "<rss/>");
    await put("downloads/readme.txt", "hello");
    const out = await expectProblem(store, /site: 4 public object\(s\) under the plugin's own names that no release in the catalog names \(.*downloads\/bridge-plugin-9\.9\.9\.dmg/);
    expect(out).toMatch(/site: 2 object\(s\) on the public site that relcast did not write for bridge-plugin \(.*api\/v1\/plugins\/other\/appcast\.xml.*\): .*delete them/);
  });

  it("a page beside index.html and a folder relcast never makes, at the site's root: exit 11, each named with the fix", async () => {
    const store = await copyStore();
    await writeFile(path.join(store, "evil.html"), "<script>steal()</script>");
    await mkdir(path.join(store, "assets"));
    await writeFile(path.join(store, "assets", "x.js"), "steal()");
    await expectProblem(store, /site: 2 object\(s\) on the public site that relcast did not write for bridge-plugin \("assets\/x\.js", evil\.html\): the site's host serves them .*delete them/);
  });

  it("a site's usual root files the publisher keeps (robots.txt, favicon.ico, .well-known/) are named as warnings, not problems", async () => {
    const store = await copyStore();
    await writeFile(path.join(store, "robots.txt"), "User-agent: *\nDisallow:\n");
    await writeFile(path.join(store, "favicon.ico"), "icon");
    const res = await verify(store);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout + res.stderr).toMatch(/2 site file\(s\) relcast does not write \(favicon\.ico, robots\.txt\): kept as the publisher's own/);
  });

  it("the folder store's temp and lock files on the public site are warnings naming gc; other .relcast-* names are problems (exit 11); gc removes both, and verify then passes", async () => {
    const store = await copyStore();
    // As the store makes them (a killed run's): warnings. Named like them but not as the store makes them: problems.
    const own = [".relcast-tmp-2-0123456789ab", "icons/.relcast-lock-bridge-plugin-1.0.0-icon.png"];
    const hidden = ["downloads/.relcast-tmp-1-aa", "api/v1/plugins/bridge-plugin/.relcast-evil.html"];
    for (const key of [...own, ...hidden]) {
      await mkdir(path.dirname(path.join(store, key)), { recursive: true });
      await writeFile(path.join(store, key), "left behind");
    }
    const out = await expectProblem(store, /site: 2 file\(s\) named like the folder store's temp and lock files but not as it makes them \(.*\): no run of relcast wrote them/);
    for (const key of hidden) expect(out).toContain(key);
    expect(out).toMatch(/2 temp or lock file\(s\) of the folder store on the public site \(.*\): an interrupted write left them .*run `relcast gc`/);
    for (const key of own) expect(out).toContain(key);
    const gc = await runCli(["gc", "--config", ws.configFile, "--store", `file://${store}`, "--older-than", "0"]);
    expect(gc.code, gc.stdout + gc.stderr).toBe(0);
    const res = await verify(store);
    expect(res.code, res.stdout + res.stderr).toBe(0);
  });

  it("files in a .relcast-* folder, or .relcast-* files under releases/ or any other folder, which the folder store's listing hides: exit 11; gc removes the .relcast-* files, the folder's content is named for deletion by hand", async () => {
    const store = await copyStore();
    const named = ["evil/.relcast-x.html", "releases/.relcast-q.html", "releases/1.1.0/.relcast-lock-foo"];
    const inFolder = ".relcast-d/payload.html";
    for (const key of [...named, inFolder]) {
      await mkdir(path.dirname(path.join(store, key)), { recursive: true });
      await writeFile(path.join(store, key), "<script>alert(1)</script>");
    }
    const out = await expectProblem(store, /site: 2 file\(s\) named like the folder store's temp and lock files but not as it makes them .*relcast gc --older-than 0/);
    for (const key of named) expect(out).toContain(key);
    // A lock named as the store names its locks is a killed run's: a warning.
    expect(out).toMatch(/1 temp or lock file\(s\) of the folder store on the public site \("releases\/1\.1\.0\/\.relcast-lock-foo"\)/);
    expect(out).toMatch(/site: 1 file\(s\) in a folder named as the folder store names its temp files \(".relcast-d\/payload\.html"\).*delete it by hand/);
    const gc = await runCli(["gc", "--config", ws.configFile, "--store", `file://${store}`, "--older-than", "0"]);
    expect(gc.code, gc.stdout + gc.stderr).toBe(0);
    await expectProblem(store, /site: 1 file\(s\) in a folder named as the folder store names its temp files/);
    await rm(path.join(store, ".relcast-d"), { recursive: true });
    const res = await verify(store);
    expect(res.code, res.stdout + res.stderr).toBe(0);
  });

  it("a store after relcast gc, a yank, an unyank and a site sync still verifies clean (everything relcast writes is known)", async () => {
    const store = await copyStore();
    const steps: string[][] = [
      ["gc", "--older-than", "0"],
      ["yank", "1.1.0", "--reason", "broken"],
      ["site", "sync"],
      ["unyank", "1.1.0"],
      ["rebuild"],
      ["site", "sync"],
    ];
    for (const step of steps) {
      const res = await runCli([...step, "--config", ws.configFile, "--store", `file://${store}`]);
      expect(res.code, `${step.join(" ")}: ${res.stdout}${res.stderr}`).toBe(0);
      const checked = await verify(store);
      expect(checked.code, `after ${step.join(" ")}: ${checked.stdout}${checked.stderr}`).toBe(0);
    }
  });

  describe("the stable latest downloads state", () => {
    const STATE = "downloads/bridge-plugin-latest.json";

    it.each([
      { name: "rewritten to name an older release by hand", bytes: () => '{"version":"1.1.0"}', problem: /site: downloads\/bridge-plugin-latest\.json is not the state the site step writes for 1\.1\.0/ },
      { name: "naming a version no release is", bytes: () => '{"version":"9.9.9"}', problem: /site: downloads\/bridge-plugin-latest\.json names "9\.9\.9", which no release in the catalog is/ },
      { name: "not JSON", bytes: () => "{\"version\":\x0b\"1.2.0\"}", problem: /site: downloads\/bridge-plugin-latest\.json is not valid state JSON/ },
    ])("$name: exit 11, not a warning", async ({ bytes, problem }) => {
      const store = await copyStore();
      await writeFile(path.join(store, STATE), bytes());
      await expectProblem(store, problem);
    });

    it("site sync repairs what verify names: a state with a wrong checksum, and same-size copies of another release at the latest paths", async () => {
      const store = await copyStore();
      const state = JSON.parse(await readFile(path.join(store, STATE), "utf8"));
      await writeFile(path.join(store, STATE), JSON.stringify({ ...state, dmgSha256: "0".repeat(64) }, null, 2) + "\n");
      const older = path.join(store, "downloads", "bridge-plugin-1.1.0.dmg");
      expect((await stat(older)).size).toBe((await stat(path.join(store, "downloads", "bridge-plugin-latest.dmg"))).size);
      for (const to of ["downloads/bridge-plugin-latest.dmg", "releases/latest/bridge-plugin-1.2.0.dmg"]) {
        await rm(path.join(store, to));
        await cp(older, path.join(store, to));
      }
      await expectProblem(store, /latest\.json is not the state the site step writes for 1\.2\.0/, /releases\/latest\/bridge-plugin-1\.2\.0\.dmg differs from releases\/1\.2\.0\/bridge-plugin-1\.2\.0\.dmg: run `relcast site sync`/);
      const sync = await runCli(["site", "sync", "--config", ws.configFile, "--store", `file://${store}`]);
      expect(sync.code, sync.stderr).toBe(0);
      expect(sync.stderr).not.toContain("already up to date");
      const res = await verify(store);
      expect(res.code, res.stdout + res.stderr).toBe(0);
    });

    it("exactly the state of the release before (a publish killed before its site step) stays a warning", async () => {
      const older = await copyStore();
      // Take the state and the stable downloads from a copy of the store as it was after 1.1.0's publish: re-render them with 1.1.0 latest by yanking 1.2.0 in a scratch copy.
      const scratch = await copyStore();
      const yank = await runCli(["yank", "1.2.0", "--config", ws.configFile, "--store", `file://${scratch}`, "--key-file", ws.keyFile]);
      expect(yank.code, yank.stderr).toBe(0);
      for (const key of [STATE, "downloads/bridge-plugin-latest.dmg", "downloads/bridge-plugin-latest.zip"]) {
        await rm(path.join(older, key), { force: true });
        await cp(path.join(scratch, key), path.join(older, key));
      }
      const res = await verify(older);
      expect(res.code, res.stdout + res.stderr).toBe(0);
      expect(res.stdout).toMatch(/still holds 1\.1\.0, not 1\.2\.0|the stable latest downloads state says 1\.1\.0, not 1\.2\.0/);
    });
  });

  describe("the public delta copies the appcast names", () => {
    const key = (store: string) => path.join(store, DELTA);

    it("a missing delta copy: exit 11", async () => {
      const store = await copyStore();
      await rm(key(store));
      await expectProblem(store, /site: downloads\/bridge-plugin-1\.2\.0-from-1\.1\.0\.delta is missing, but the appcast item of 1\.2\.0 names it/);
    });

    it("a delta copy with other bytes of the same size: exit 11 on SHA-256 and signature (Python cryptography agrees it does not verify)", async () => {
      const store = await copyStore();
      const bytes = await readFile(key(store));
      const mid = bytes.length >> 1;
      bytes[mid] = bytes[mid]! ^ 0xff;
      await writeFile(key(store), bytes);
      const delta = records.get("1.2.0")!.autoupdate.deltas[0];
      // The changed copy does not verify; the store's own copy does.
      expect(execFileSync("python3", ["-c", PY_VERIFY, ws.key.publicKeyBase64, delta.edSignature, key(store), key(ws.storeDir)]).toString().trim().split("\n")).toEqual(["bad", "ok"]);
      await expectProblem(store,
        new RegExp(`site: ${esc(DELTA)} has SHA-256 [0-9a-f]{12}…; the record of 1\\.2\\.0 says ${delta.sha256.slice(0, 12)}…`),
        new RegExp(`site: ${esc(DELTA)}: the edSignature the record of 1\\.2\\.0 gives does not verify over it`));
    });

    it("a truncated delta copy: exit 11 on its size", async () => {
      const store = await copyStore();
      const bytes = await readFile(key(store));
      await writeFile(key(store), bytes.subarray(0, bytes.length - 1));
      await expectProblem(store, new RegExp(`site: ${esc(DELTA)} is ${bytes.length - 1} bytes; the record of 1\\.2\\.0 says ${bytes.length}`));
    });
  });

  it("relcast rebuild rewrites the public site with the feeds: a tampered public appcast and page pass afterwards", async () => {
    const store = await copyStore();
    await edit(store, APPCAST, (xml) => xml.replace("<sparkle:version>100</sparkle:version>", "<sparkle:version>999</sparkle:version>"));
    await rm(path.join(store, "index.html"));
    await expectProblem(store, /appcast\.xml: 1\.0\.0: appcast sparkle:version is "999"/, /site: index\.html is missing/);
    const rebuilt = await runCli(["rebuild", "--config", ws.configFile, "--store", `file://${store}`]);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    const res = await verify(store);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).not.toContain("warnings:");
    expect(await readFile(path.join(store, APPCAST))).toEqual(await readFile(path.join(store, "releases", "appcast.xml")));
  });

  describe("the state an interrupted publish or yank leaves is a warning, and only that state", () => {
    let killed: string;

    beforeAll(async () => {
      killed = await copyStore();
      const res = await runCli([...ws.publishArgs(await pluginIn(ws, "v130", "1.3.0", 130), "1.3.0"), "--store", `file://${killed}`], { env: { RELCAST_FAILPOINT: "before:site" } });
      expect(res.signal).toBe("SIGKILL");
    }, 120_000);

    it("a publish killed before its site step: a warning naming the release not listed yet (with or without the config)", async () => {
      for (const res of [await verify(killed), await verifyBare(killed)]) {
        expect(res.code, res.stdout + res.stderr).toBe(0);
        expect(res.stdout).toMatch(/warnings:\n(?: {2}.*\n)* {2}site: api\/v1\/plugins\/bridge-plugin\/releases\.json, api\/v1\/plugins\/bridge-plugin\/appcast\.xml, index\.html, changelog\.html still hold the state before the last change \(they do not list 1\.3\.0 yet\)/);
      }
      expect(itemsOf(path.join(killed, APPCAST)).map((i) => i.short)).toEqual(["1.2.0", "1.1.0", "1.0.0"]);
    });

    it("the same state a quarter of an hour after the last change: a problem (exit 11) naming when, since no publish is finishing it", async () => {
      const store = await copyStore(killed);
      const long = new Date(Date.now() - 20 * 60_000);
      await utimes(path.join(store, "releases", "catalog.json"), long, long);
      const res = await verify(store);
      expect(res.code, res.stdout + res.stderr).toBe(11);
      expect(res.stdout).toMatch(/site: .*appcast\.xml.* still hold the state before the last change \(they do not list 1\.3\.0 yet\): .*; the last change to releases\/catalog\.json was made at .*, 20 minutes ago, so no publish is still finishing it/);
      expect(res.stdout).toMatch(/stable latest downloads state says 1\.2\.0, not 1\.3\.0.*20 minutes ago|still holds 1\.2\.0, not 1\.3\.0.*20 minutes ago/);
    });

    it("killed inside the site step after the appcast and pages, before the public catalog: still that warning", async () => {
      const store = await copyStore(killed);
      await cp(path.join(store, "releases", "appcast.xml"), path.join(store, APPCAST));
      const res = await verify(store);
      expect(res.code, res.stdout + res.stderr).toBe(0);
      expect(res.stdout).toMatch(/site: api\/v1\/plugins\/bridge-plugin\/releases\.json, index\.html, changelog\.html still hold the state before the last change \(they do not list 1\.3\.0 yet\)/);
    });

    it.each([
      ["a version changed in the stale appcast", (xml: string) => xml.replace("<sparkle:version>100</sparkle:version>", "<sparkle:version>999</sparkle:version>"), /appcast\.xml: 1\.0\.0: appcast sparkle:version is "999" but the catalog says "100"/],
      ["an item deleted from the stale appcast", (xml: string) => xml.replace(item(xml, "1.2.0"), ""), /appcast\.xml: 1\.2\.0: the appcast has no item for 1\.2\.0/],
    ])("%s: exit 11, not passed off as the previous state", async (_name, change, problem) => {
      const store = await copyStore(killed);
      await edit(store, APPCAST, change);
      await expectProblem(store, problem);
    });

    it("the stale index.html with other text: exit 11, named against the page it is a copy of", async () => {
      const store = await copyStore(killed);
      await edit(store, "index.html", (html) => html.replace("<h1>Bridge Plugin</h1>", "<h1>Bridge Plugin (get it elsewhere)</h1>"));
      const out = await expectProblem(store, /site: index\.html differs from the page relcast renders from the catalog \(line \d+: .*get it elsewhere.*\); `relcast site sync` rewrites it/);
      expect(out).not.toMatch(/index\.html lacks the link/);
      expect(out).toMatch(/site: api\/v1\/plugins\/bridge-plugin\/releases\.json, api\/v1\/plugins\/bridge-plugin\/appcast\.xml, changelog\.html still hold the state before the last change/);
    });

    it("the public catalog already new while the appcast is still old (an order the site step never writes): exit 11", async () => {
      const store = await copyStore(killed);
      await cp(path.join(store, "releases", "catalog.json"), path.join(store, CATALOG));
      await expectProblem(store, /site: api\/v1\/plugins\/bridge-plugin\/appcast\.xml: the appcast has no item for 1\.3\.0|appcast\.xml: 1\.3\.0: the appcast has no item for 1\.3\.0/);
    });

    it("two publishes behind (both killed before their site step): exit 11", async () => {
      const store = await copyStore(killed);
      const res = await runCli([...ws.publishArgs(await pluginIn(ws, "v140", "1.4.0", 140), "1.4.0"), "--store", `file://${store}`], { env: { RELCAST_FAILPOINT: "before:site" } });
      expect(res.signal).toBe("SIGKILL");
      await expectProblem(store, /releases\.json differs from releases\/catalog\.json and is not the catalog as it was before the last publish, yank or unyank: it lists 3 releases; the catalog lists 5/);
      const synced = await runCli(["site", "sync", "--config", ws.configFile, "--store", `file://${store}`]);
      expect(synced.code, synced.stderr).toBe(0);
      const after = await verify(store);
      expect(after.code, after.stdout).toBe(0);
      expect(after.stdout).not.toContain("warnings:");
    });

    it("a yank whose site step did not run: a warning that the public feeds still offer the yanked release", async () => {
      const store = await copyStore();
      const saved = await mkdtemp(path.join(copies, "saved-"));
      for (const key of [APPCAST, CATALOG, "index.html"]) await cp(path.join(store, key), path.join(saved, path.basename(key)));
      const yank = await runCli(["yank", "1.1.0", "--reason", "crashes on launch", "--config", ws.configFile, "--store", `file://${store}`]);
      expect(yank.code, yank.stderr).toBe(0);
      for (const key of [APPCAST, CATALOG, "index.html"]) await cp(path.join(saved, path.basename(key)), path.join(store, key));
      const res = await verify(store);
      expect(res.code, res.stdout + res.stderr).toBe(0);
      expect(res.stdout).toMatch(/site: .*releases\.json, .*appcast\.xml, index\.html still hold the state before the last change \(they still offer 1\.1\.0, which is yanked \(.*: crashes on launch\)\)/);
      // The same stale state with the yanked release's entry changed otherwise is not that state.
      await edit(store, CATALOG, (text) => text.replace(`"edSignature": "${sig("1.1.0")}"`, `"edSignature": "${sig("1.0.0")}"`));
      await expectProblem(store, /releases\.json differs from releases\/catalog\.json .*: its entry of 1\.1\.0 differs from the catalog's in autoupdate\.edSignature/);
    });
  });
});
