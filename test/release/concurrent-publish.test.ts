import { execFileSync } from "node:child_process";
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace } from "../helpers/workspace.js";

describe("20 publishes at once into one folder store", () => {
  it("loses no record: catalog count 20, 20 appcast items, every record stored, latest is the highest", async () => {
    const ws = await makeWorkspace();
    const versions = Array.from({ length: 20 }, (_, i) => `1.${i}.0`);
    const plugins = await Promise.all(versions.map((v, i) => ws.plugin(v, 1000 + i)));
    const results = await Promise.all(versions.map((v, i) => runCli(ws.publishArgs(plugins[i]!, v, ["--quiet"]))));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const catalog = JSON.parse(await readFile(path.join(ws.storeDir, "releases", "catalog.json"), "utf8"));
    expect(catalog.count).toBe(20);
    expect(new Set(catalog.versions.map((v: { version: string }) => v.version))).toEqual(new Set(versions));
    const items = execFileSync("python3", ["-c", "import sys,xml.etree.ElementTree as E;print(len(E.parse(sys.argv[1]).getroot().find('channel').findall('item')))", path.join(ws.storeDir, "releases", "appcast.xml")]);
    expect(Number(items.toString())).toBe(20);
    for (const v of versions) expect(await readdir(path.join(ws.storeDir, "releases", v))).toEqual(expect.arrayContaining(["release.json", `bridge-plugin-${v}.dmg`, `bridge-plugin-${v}.zip`]));
    expect((await readdir(path.join(ws.storeDir, "releases", "latest"))).sort()).toEqual(["bridge-plugin-1.19.0.dmg", "bridge-plugin-1.19.0.zip"]);
    const leftovers = (await readdir(path.join(ws.storeDir, "releases"))).filter((n) => n.startsWith(".relcast-"));
    expect(leftovers).toEqual([]);
  });

  it("a site sync planned from a catalog older than latest/ does not leave the lower version there", async () => {
    // The race the 20 publishes above can hit: publish B has copied 1.1.0 into latest/ and removed 1.0.0, but its
    // feeds are not written yet; a site step (of another publish, or `site sync`) still reads 1.0.0 as the catalog's
    // latest and copies it back. Whoever copies last must remove the lower version, as the latest step does.
    const ws = await makeWorkspace();
    const p = await ws.plugin("1.0.0", 100);
    expect((await runCli(ws.publishArgs(p, "1.0.0", ["--quiet"]))).code).toBe(0);
    const latest = path.join(ws.storeDir, "releases", "latest");
    await copyFile(path.join(ws.storeDir, "releases", "1.0.0", "bridge-plugin-1.0.0.dmg"), path.join(latest, "bridge-plugin-1.1.0.dmg"));
    // B wrote its record before its copies (a higher version no valid record backs would be planted, and removed).
    await mkdir(path.join(ws.storeDir, "releases", "1.1.0"));
    await writeFile(path.join(ws.storeDir, "releases", "1.1.0", "release.json"), (await readFile(path.join(ws.storeDir, "releases", "1.0.0", "release.json"), "utf8")).replaceAll("1.0.0", "1.1.0"));
    for (const name of ["bridge-plugin-1.0.0.dmg", "bridge-plugin-1.0.0.zip"]) await rm(path.join(latest, name));
    const sync = await runCli(["site", "sync", "--config", ws.configFile]);
    expect(sync.code, sync.stderr).toBe(0);
    expect(await readdir(latest)).toEqual(["bridge-plugin-1.1.0.dmg"]);
  });
});
