/**
 * Issue 33 item 2: every record is accounted for. A record the catalog does
 * not list (a publish interrupted after its record, or a catalog write the
 * store lost) and a record under another version's folder are verify
 * problems naming the repair; rebuild prints what it adds and drops, has a
 * dry run, and refuses a misplaced record instead of listing it twice.
 */
import { cp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limit } from "../helpers/release-kit.js";
import { runCli as runCliNow } from "../helpers/run-cli.js";
import { ownWorkspace } from "../helpers/st4v-own-workspace.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../helpers/workspace.js";

// Every test works on a workspace of its own (the config, whose store is `file://./store`, beside a copy of a saved
// store), so the tests run at the same time; at most three CLI runs of this file at once (each waits on its child).
const slot = limit(3);
const runCli = (...args: Parameters<typeof runCliNow>) => slot(() => runCliNow(...args));

let base: Workspace;
let afterFirst: string;
let afterBoth: string;

const restore = (from: string) => ownWorkspace(base, from);

beforeAll(async () => {
  base = await makeWorkspace();
  afterFirst = path.join(base.dir, "after-first");
  afterBoth = path.join(base.dir, "after-both");
  for (const [v, b] of [["1.0.0", 100], ["1.1.0", 110]] as const) {
    const p = await base.plugin(v, b);
    const res = await runCli(base.publishArgs(p, v, ["--published-at", `2026-0${b === 100 ? 1 : 2}-01T00:00:00Z`]));
    expect(res.code, res.stderr).toBe(0);
    await cp(base.storeDir, v === "1.0.0" ? afterFirst : afterBoth, { recursive: true, verbatimSymlinks: true });
  }
});
afterAll(async () => {
  await rm(base.dir, { recursive: true, force: true });
});

/** The store as a publish of 1.1.0 leaves it when it stops after the record, before the feeds. */
async function interruptedPublish(): Promise<Workspace> {
  const ws = await restore(afterBoth);
  for (const key of ["catalog.json", "appcast.xml"]) await cp(path.join(afterFirst, "releases", key), path.join(ws.storeDir, "releases", key));
  return ws;
}

/** The store after 1.0.0, plus these objects of 1.1.0 as an upload that stopped before the record leaves them. */
async function uploadedWithoutRecord(names: readonly string[]): Promise<Workspace> {
  const ws = await restore(afterFirst);
  await mkdir(path.join(ws.storeDir, "releases", "1.1.0"));
  for (const name of names) await cp(path.join(afterBoth, "releases", "1.1.0", name), path.join(ws.storeDir, "releases", "1.1.0", name));
  return ws;
}

describe.concurrent("verify accounts for every record", () => {
  it("the published store verifies", async () => {
    const ws = await restore(afterBoth);
    const r = await runCli(["verify", "--config", ws.configFile]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });

  it("a record the catalog does not list is a problem (exit 11) naming the version and the repair", async () => {
    const ws = await interruptedPublish();
    const r = await runCli(["verify", "--config", ws.configFile]);
    expect(r.code, r.stdout + r.stderr).toBe(11);
    expect(r.stdout + r.stderr).toContain("release 1.1.0 has a record (releases/1.1.0/release.json) but the catalog does not list it");
    expect(r.stdout + r.stderr).toContain("relcast rebuild");
  });

  it("a yank marker that does not parse, or disagrees with the catalog, is a problem", async () => {
    const ws = await restore(afterBoth);
    const yank = await runCli(["yank", "1.0.0", "--reason", "broken", "--config", ws.configFile]);
    expect(yank.code, yank.stderr).toBe(0);
    const marker = path.join(ws.storeDir, "releases", "1.0.0", "yank.json");
    const good = await readFile(marker, "utf8");
    await writeFile(marker, "{");
    const broken = await runCli(["verify", "--config", ws.configFile]);
    expect(broken.code).toBe(11);
    expect(broken.stdout + broken.stderr).toContain("yank marker releases/1.0.0/yank.json is not a valid yank marker");
    await writeFile(marker, good.replace(/"yankedAt": "[^"]+"/, '"yankedAt": "2026-02-30T00:00:00Z"'));
    expect((await runCli(["verify", "--config", ws.configFile])).code).toBe(11);
    await writeFile(marker, good.replace(/"yankedAt": "[^"]+"/, '"yankedAt": "2026-03-01T00:00:00.000Z"'));
    const other = await runCli(["verify", "--config", ws.configFile]);
    expect(other.code).toBe(11);
    expect(other.stdout + other.stderr).toMatch(/yank marker releases\/1\.0\.0\/yank\.json \(yanked at 2026-03-01T00:00:00\.000Z\) disagrees with the catalog/);
  });

  it("a record under another version's folder is a problem naming both", async () => {
    const ws = await restore(afterBoth);
    await mkdir(path.join(ws.storeDir, "releases", "2.0.0"));
    await cp(path.join(ws.storeDir, "releases", "1.0.0", "release.json"), path.join(ws.storeDir, "releases", "2.0.0", "release.json"));
    const r = await runCli(["verify", "--config", ws.configFile]);
    expect(r.code, r.stdout + r.stderr).toBe(11);
    expect(r.stdout + r.stderr).toContain("record releases/2.0.0/release.json is stored under 2.0.0's folder but holds release 1.0.0");
  });

  it("a version folder with a disk image but no record, that the catalog does not list, is a problem naming the objects and both repairs", async () => {
    // An upload stopped after its objects, before its record (or the record deleted): a release no feed will ever show.
    const ws = await uploadedWithoutRecord(["bridge-plugin-1.1.0.dmg", "bridge-plugin-1.1.0.zip"]);
    const r = await runCli(["verify", "--config", ws.configFile]);
    expect(r.code, r.stdout + r.stderr).toBe(11);
    expect(r.stdout).toMatch(/feed: releases\/1\.1\.0\/ holds \d+ object\(s\) \(.*bridge-plugin-1\.1\.0\.dmg.*\) but no record, and the catalog does not list 1\.1\.0/);
    expect(r.stdout).toContain("re-run `relcast publish` of 1.1.0");
    expect(r.stdout).toContain("delete releases/1.1.0/");
    const json = JSON.parse((await runCli(["verify", "--config", ws.configFile, "--json"])).stdout);
    expect(json.ok).toBe(false);
    expect(json.feed.join("\n")).toContain("releases/1.1.0/ holds");
  });

  it("a record-less folder without a disk image (an upload stopped before it) and an object no record names are warnings, not failures", async () => {
    const ws = await uploadedWithoutRecord(["bridge-plugin-1.1.0.zip"]);
    await writeFile(path.join(ws.storeDir, "releases", "1.0.0", "notes-draft.txt"), "left here by hand\n");
    const r = await runCli(["verify", "--config", ws.configFile, "--json"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.storeWarnings.join("\n")).toMatch(/releases\/1\.1\.0\/ holds \d+ object\(s\) .* but no record or disk image/);
    expect(report.storeWarnings.join("\n")).toContain("releases/1.0.0/ holds 1 object(s) its record does not name (notes-draft.txt)");
    const text = await runCli(["verify", "--config", ws.configFile]);
    expect(text.stdout).toMatch(/warnings:\n(.*\n)*  store: releases\/1\.1\.0\//);
  });

  it("folder names read from the store are printed escaped: no newline-started workflow command, no ESC, no bidi control reaches the log", async () => {
    const ws = await restore(afterBoth);
    const evil = "x\n::error title=pwned::injected\n\x1b[31mRED\u202E";
    await mkdir(path.join(ws.storeDir, "releases", evil));
    await cp(path.join(afterBoth, "releases", "1.1.0", "bridge-plugin-1.1.0.dmg"), path.join(ws.storeDir, "releases", evil, "x.DMG"));
    try {
      const r = await runCli(["verify", "--config", ws.configFile], { env: { GITHUB_ACTIONS: "true" } });
      expect(r.code, r.stdout + r.stderr).toBe(11);
      const out = r.stdout + r.stderr;
      expect(out.split("\n").filter((line) => line.trimStart().startsWith("::error title=pwned"))).toEqual([]);
      expect(out).not.toContain("\x1b");
      expect(out).not.toContain("\u202E");
      // A name that is not a version: no "re-run publish" advice, and the .DMG counts as a disk image (a problem, not a warning).
      expect(r.stdout).toMatch(/is not a version relcast publishes, so no publish wrote it/);
      expect(r.stdout).toContain("\\u001b[31mRED\\u{202E}");
    } finally {
      await rm(path.join(ws.storeDir, "releases", evil), { recursive: true, force: true });
    }
  });

  it("many warnings: the text report prints the first 20 and counts the rest, --json lists them all", async () => {
    const ws = await restore(afterBoth);
    const strays = Array.from({ length: 25 }, (_, i) => `9.${i}.0`);
    for (const v of strays) {
      await mkdir(path.join(ws.storeDir, "releases", v));
      await writeFile(path.join(ws.storeDir, "releases", v, "left.txt"), "x\n");
    }
    try {
      const text = await runCli(["verify", "--config", ws.configFile]);
      expect(text.code, text.stdout + text.stderr).toBe(0);
      expect(text.stdout.split("\n").filter((l) => /^ {2}store: releases\/9\.\d+\.0\//.test(l))).toHaveLength(20);
      expect(text.stdout).toContain("… and 5 more warning(s): `relcast verify --json` lists them all");
      const json = JSON.parse((await runCli(["verify", "--config", ws.configFile, "--json"])).stdout);
      expect(json.storeWarnings.filter((w: string) => w.startsWith("releases/9."))).toHaveLength(25);
    } finally {
      for (const v of strays) await rm(path.join(ws.storeDir, "releases", v), { recursive: true, force: true });
    }
  });

  it("records left in a store whose catalog is gone are named", async () => {
    const ws = await restore(afterBoth);
    await rm(path.join(ws.storeDir, "releases", "catalog.json"));
    const r = await runCli(["verify", "--config", ws.configFile]);
    expect(r.code).toBe(11);
    expect(r.stdout + r.stderr).toContain("release 1.0.0 has a record (releases/1.0.0/release.json) but the catalog does not list it");
  });
});

describe.concurrent("rebuild says what it changes", () => {
  it("--dry-run prints the release it would add and writes nothing; the rebuild then adds it and verify passes", async () => {
    const ws = await interruptedPublish();
    const before = await snapshotTree(ws.storeDir);
    const dry = await runCli(["rebuild", "--config", ws.configFile, "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain("would add 1.1.0 (stable)");
    expect(dry.stderr).not.toContain("1.0.0");
    expect(dry.stderr).toContain("nothing written");
    expect(await snapshotTree(ws.storeDir)).toEqual(before);

    const real = await runCli(["rebuild", "--config", ws.configFile]);
    expect(real.code, real.stderr).toBe(0);
    expect(real.stderr).toContain("add 1.1.0 (stable)");
    expect(real.stderr).not.toContain("would");
    const v = await runCli(["verify", "--config", ws.configFile]);
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });

  it("prints a release it drops (its record is gone)", async () => {
    const ws = await restore(afterBoth);
    await rm(path.join(ws.storeDir, "releases", "1.1.0", "release.json"));
    const dry = await runCli(["rebuild", "--config", ws.configFile, "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain("would drop 1.1.0 (stable)");
  });

  it("an unchanged store: rebuild says it changes no release", async () => {
    const ws = await restore(afterBoth);
    const dry = await runCli(["rebuild", "--config", ws.configFile, "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain("would change no release in the catalog");
  });

  it("refuses a record in another version's folder (exit 12), with or without --dry-run, and writes nothing", async () => {
    const ws = await restore(afterBoth);
    await mkdir(path.join(ws.storeDir, "releases", "2.0.0"));
    await cp(path.join(ws.storeDir, "releases", "1.0.0", "release.json"), path.join(ws.storeDir, "releases", "2.0.0", "release.json"));
    const before = await snapshotTree(ws.storeDir);
    for (const extra of [[], ["--dry-run"]]) {
      const r = await runCli(["rebuild", "--config", ws.configFile, ...extra]);
      expect(r.code, r.stderr).toBe(12);
      expect(r.stderr).toContain("releases/2.0.0/release.json (it holds release 1.0.0, not 2.0.0)");
      expect(r.stderr).toContain("another version's folder");
    }
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
    const catalog = JSON.parse(await readFile(path.join(ws.storeDir, "releases", "catalog.json"), "utf8"));
    expect(catalog.versions.map((r: { version: string }) => r.version)).toEqual(["1.1.0", "1.0.0"]);
  });
});

describe.concurrent("objects no version folder or key explains", () => {
  it("an object directly under releases/ (not the catalog, its index or the appcast) is a warning naming it; exit 0", async () => {
    const ws = await restore(afterBoth);
    await writeFile(path.join(ws.storeDir, "releases", "bridge-plugin-1.1.0.dmg"), "stray");
    await writeFile(path.join(ws.storeDir, "releases", "notes.txt"), "stray");
    const res = await runCli(["verify", "--json", "--config", ws.configFile]);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    const report = JSON.parse(res.stdout);
    const loose = report.storeWarnings.filter((w: string) => w.includes("outside any version folder"));
    expect(loose).toEqual([expect.stringMatching(/^releases\/ holds 2 object\(s\) outside any version folder \(bridge-plugin-1\.1\.0\.dmg, notes\.txt\)/)]);
    expect(report.storeWarnings.join("\n")).not.toMatch(/catalog\.json|appcast\.xml|catalog-index\.json/);
  });

  it("a file or folder whose name is not UTF-8 (folder store) is a warning showing its bytes; exit 0", async () => {
    const ws = await restore(afterBoth);
    const dir = path.join(ws.storeDir, "releases", "1.1.0");
    // "café.dmg" in Latin-1: the byte 0xE9 alone is not UTF-8.
    await writeFile(Buffer.concat([Buffer.from(`${dir}/caf`), Buffer.from([0xe9]), Buffer.from(".dmg")]), "stray");
    await mkdir(Buffer.concat([Buffer.from(`${ws.storeDir}/downloads/old`), Buffer.from([0xff])]));
    const res = await runCli(["verify", "--json", "--config", ws.configFile]);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    const warnings: string[] = JSON.parse(res.stdout).storeWarnings;
    expect(warnings).toContainEqual(expect.stringMatching(/^releases\/1\.1\.0\/caf\\xe9\.dmg has a name that is not UTF-8/));
    expect(warnings).toContainEqual(expect.stringMatching(/^downloads\/old\\xff\/ has a name that is not UTF-8/));
    const text = await runCli(["verify", "--config", ws.configFile]);
    expect(text.stdout + text.stderr).toContain("caf\\xe9.dmg");
  });

  it("a file whose name is not UTF-8 under the plugin's own public names is a problem (a static host serves it); exit 11", async () => {
    const ws = await restore(afterBoth);
    await writeFile(Buffer.concat([Buffer.from(`${ws.storeDir}/downloads/bridge-plugin-`), Buffer.from([0xff]), Buffer.from(".dmg")]), "not published");
    await writeFile(Buffer.concat([Buffer.from(`${ws.storeDir}/releases/latest/bridge-plugin-`), Buffer.from([0xfe]), Buffer.from(".zip")]), "not published");
    const res = await runCli(["verify", "--json", "--config", ws.configFile]);
    expect(res.code, res.stdout + res.stderr).toBe(11);
    const report = JSON.parse(res.stdout);
    expect(report.feed).toContainEqual(expect.stringMatching(/^downloads\/bridge-plugin-\\xff\.dmg has a name that is not UTF-8 .* under the plugin's own public names/));
    expect(report.feed).toContainEqual(expect.stringMatching(/^releases\/latest\/bridge-plugin-\\xfe\.zip has a name that is not UTF-8 .* under the plugin's own public names/));
    expect(report.storeWarnings.join("\n")).not.toMatch(/bridge-plugin-\\x(ff|fe)/);
  });
});
