import { cp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { limit } from "../helpers/release-kit.js";
import { runCli as runCliNow } from "../helpers/run-cli.js";
import { ownWorkspace } from "../helpers/st4v-own-workspace.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

/**
 * A release record is written once at publish. An edit to it afterwards (a summary, a Sparkle option, a time
 * field) must show in verify, and a rebuild that copies it into catalog, appcast and pages must say so.
 */
// Each test edits a workspace of its own (a copy of the published store beside the config), so the tests run at the
// same time; at most three CLI runs of this file at once (each waits on its child).
const slot = limit(3);
const runCli = (...args: Parameters<typeof runCliNow>) => slot(() => runCliNow(...args));

describe.concurrent("edited release records", () => {
  let base: Workspace;
  const tools = (ws: Workspace) => ({
    rel: (...parts: string[]) => path.join(ws.storeDir, "releases", ...parts),
    verify: () => runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]),
    rebuild: (...more: string[]) => runCli(["rebuild", "--config", ws.configFile, ...more]),
  });

  async function editJson(file: string, edit: (value: Record<string, any>) => void): Promise<void> {
    const value = JSON.parse(await readFile(file, "utf8"));
    edit(value);
    await writeFile(file, JSON.stringify(value, null, 2) + "\n");
  }

  // Each test starts from a copy of the store as published (a copy, not a rebuild: the tests' own rebuilds are what they check).
  const published = () => path.join(base.dir, "published");
  const own = async () => tools(await ownWorkspace(base, published()));
  beforeAll(async () => {
    base = await makeWorkspace({ timezone: "Europe/Berlin" });
    const ws = base;
    for (const [version, build] of [["1.0.0", 100], ["1.1.0", 110]] as const) {
      const p = await ws.plugin(version, build, { plist: { LSMinimumSystemVersion: "12.0" } });
      const res = await runCli(ws.publishArgs(p, version, ["--summary", `Release ${version}`, "--quiet"]));
      expect(res.code, res.stderr).toBe(0);
    }
    const yank = await runCli(["yank", "1.1.0", "--config", ws.configFile, "--reason", "bad build"]);
    expect(yank.code, yank.stderr).toBe(0);
    await cp(ws.storeDir, published(), { recursive: true, verbatimSymlinks: true });
  });

  it("passes the untouched store: the yank state is the catalog's alone", async () => {
    const { verify } = await own();
    const res = await verify();
    expect(res.code, res.stdout + res.stderr).toBe(0);
  });

  it("names each edited field in verify, and rebuild --dry-run and rebuild name the release they change", async () => {
    const { rel, verify, rebuild } = await own();
    const record = rel("1.0.0", "release.json");
    await editJson(record, (r) => {
      r.autoupdate.minimumSystemVersion = "9.0";
      r.summary = "Edited later";
      r.publishedAtTimezone = "Asia/Tokyo";
    });
    const res = await verify();
    expect(res.code, res.stdout + res.stderr).toBe(11);
    const problem = res.stdout.split("\n").find((l) => l.includes("record releases/1.0.0/release.json and the catalog entry disagree"));
    expect(problem, res.stdout).toBeDefined();
    expect(problem).toContain('summary (record "Edited later", catalog "Release 1.0.0")');
    expect(problem).toContain('publishedAtTimezone (record "Asia/Tokyo", catalog "Europe/Berlin")');
    expect(problem).toContain('autoupdate.minimumSystemVersion (record "9.0", catalog "12.0")');
    expect(res.stdout).not.toMatch(/1\.1\.0: record/);

    const catalogBefore = await readFile(rel("catalog.json"));
    const dry = await rebuild("--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toMatch(/would change 1\.0\.0 \(stable\): .*summary/);
    expect(dry.stderr).toMatch(/would change 1\.0\.0 \(stable\): .*autoupdate\.minimumSystemVersion/);
    expect(dry.stderr).not.toContain("would change no release");
    expect(dry.stderr).not.toMatch(/1\.1\.0/);
    expect(await readFile(rel("catalog.json"))).toEqual(catalogBefore);

    const real = await rebuild();
    expect(real.code, real.stderr).toBe(0);
    expect(real.stderr).toMatch(/^change 1\.0\.0 \(stable\): .*publishedAtTimezone/m);
    // Record and catalog agree now; the zip's own Info.plist still shows the edit.
    const after = await verify();
    expect(after.code, after.stdout).toBe(11);
    expect(after.stdout).not.toContain("disagree in");
    expect(after.stdout).toMatch(/1\.0\.0: .*LSMinimumSystemVersion is "12\.0" but sparkle:minimumSystemVersion is "9\.0"/);
    const again = await rebuild("--dry-run");
    expect(again.stderr).toContain("would change no release in the catalog");
  });

  it("names a record whose notes or times disagree with themselves, also after a rebuild copied them", async () => {
    const { rel, verify, rebuild } = await own();
    const record = rel("1.0.0", "release.json");
    await editJson(record, (r) => {
      r.releaseNotesList = [...r.releaseNotesList, "Added by hand"];
      r.publishedAtIso = "2020-01-01T00:00:00.000Z";
    });
    expect((await rebuild()).code).toBe(0);
    const res = await verify();
    expect(res.code, res.stdout).toBe(11);
    expect(res.stdout).toContain("record releases/1.0.0/release.json: releaseNotesList is not the list items of releaseNotesMarkdown");
    expect(res.stdout).toMatch(/record releases\/1\.0\.0\/release\.json: publishedAtIso 2020-01-01T00:00:00\.000Z is not the time of publishedAt/);
  });

  it("names a bidirectional control in a stored record (here its summary, copied into catalog and pages by a rebuild) as a problem of that release", async () => {
    const { rel, verify, rebuild } = await own();
    const record = rel("1.0.0", "release.json");
    await editJson(record, (r) => { r.summary = "Release \u202E0.0.2"; });
    expect((await rebuild()).code).toBe(0);
    const res = await verify();
    expect(res.code, res.stdout + res.stderr).toBe(11);
    expect(res.stdout).toMatch(/1\.0\.0: field summary: character U\+202E \(RIGHT-TO-LEFT OVERRIDE\) at position 9 is a bidirectional control/);
    expect(res.stdout).toContain("relcast rebuild");
  });

  it("names a character reference in stored Markdown notes that renders as a bidirectional control (the appcast and pages show it decoded)", async () => {
    const { rel, verify, rebuild } = await own();
    const record = rel("1.0.0", "release.json");
    await editJson(record, (r) => { r.releaseNotesMarkdown = "- Fixed &#x202E;gpj.exe crash\n"; });
    expect((await rebuild()).code).toBe(0);
    const res = await verify();
    expect(res.code, res.stdout + res.stderr).toBe(11);
    expect(res.stdout).toMatch(/1\.0\.0: field releaseNotesMarkdown: character U\+202E \(RIGHT-TO-LEFT OVERRIDE\)/);
    // A position would count in the rendered HTML, not in the field: none is given.
    expect(res.stdout).not.toMatch(/field releaseNotesMarkdown: [^\n]*at position/);
  });
});
