import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { walkFiles } from "../helpers/walk-files.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

/** Item 8: Ctrl-C and SIGTERM stop a publish cleanly and say what became public; gc finds what SIGKILL leaves. */
describe("an interrupted publish cleans up and says so", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await makeWorkspace();
    const first = await runCli(ws.publishArgs(await ws.plugin("1.0.0", 100), "1.0.0", ["--quiet"]));
    expect(first.code, first.stderr).toBe(0);
  });
  afterAll(async () => {
    await rm(ws.dir, { recursive: true, force: true });
  });

  async function tempLeftovers(): Promise<string[]> {
    const found: string[] = [];
    for await (const f of walkFiles(ws.storeDir)) if (path.basename(f).startsWith(".relcast-")) found.push(f);
    return found;
  }
  const catalog = () => readFile(path.join(ws.storeDir, "releases", "catalog.json"), "utf8");

  it.each([
    ["SIGTERM", 143, "before:downloads", "downloads", /nothing became public: \d+ object\(s\) of 1\.1\.0 were uploaded, but catalog and appcast still describe the previous releases/],
    ["SIGINT", 130, "before:zip", "zip", /nothing became public and nothing was written to the store/],
  ] as const)("%s (exit %i) at %s: names the step and what is public, leaves no temp folder or temp object", async (signal, exit, point, step, state) => {
    const tmp = await mkdtemp(path.join(ws.dir, "tmp-"));
    const before = await catalog();
    const p = await ws.plugin("1.1.0", 110);
    const res = await runCli(ws.publishArgs(p, "1.1.0"), { env: { RELCAST_FAILPOINT: point, RELCAST_FAILPOINT_SIGNAL: signal, TMPDIR: tmp } });
    expect(res.code, res.stderr).toBe(exit);
    expect(res.stderr).toMatch(new RegExp(`relcast: interrupted by ${signal} in step ${step}; `));
    expect(res.stderr).toMatch(state);
    expect(res.stderr).toMatch(/removed the temp folder .*relcast-/);
    expect(await readdir(tmp)).toEqual([]);
    expect(await tempLeftovers()).toEqual([]);
    expect(await catalog()).toBe(before);
  });

  it("SIGTERM once the feeds are written says the release may already be public; a re-run finishes and verify passes", async () => {
    const p = await ws.plugin("1.1.0", 110);
    const res = await runCli(ws.publishArgs(p, "1.1.0"), { env: { RELCAST_FAILPOINT: "before:site", RELCAST_FAILPOINT_SIGNAL: "SIGTERM" } });
    expect(res.code, res.stderr).toBe(143);
    expect(res.stderr).toMatch(/interrupted by SIGTERM in step site; 1\.1\.0 may already be public: the feeds were being updated \(releases\/catalog\.json/);
    const again = await runCli(ws.publishArgs(p, "1.1.0"));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/this run completed the interrupted publish: site/);
    const verify = await runCli(["verify", "--config", ws.configFile]);
    expect(verify.code, verify.stdout).toBe(0);
  });

  it("gc keeps temp files younger than its default age (a day: a publish may be running) and removes them with --older-than 0", async () => {
    const left = path.join(ws.storeDir, "releases", ".relcast-tmp-999999-0badc0ffee00");
    await writeFile(left, "left by a killed run");
    const kept = await runCli(["gc", "--config", ws.configFile]);
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.stderr).toContain("gc: removed 0 leftover(s)");
    expect(await tempLeftovers()).toEqual([left]);
    const help = await runCli(["gc", "--help"]);
    expect(help.stdout).toMatch(/--older-than <minutes>[\s\S]*default: "1440"/);
    const swept = await runCli(["gc", "--config", ws.configFile, "--older-than", "0"]);
    expect(swept.code, swept.stderr).toBe(0);
    expect(swept.stderr).toContain(`removed temp file ${left}`);
    expect(await tempLeftovers()).toEqual([]);
  });
});
