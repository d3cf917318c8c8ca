import { writeFile } from "node:fs/promises";
import path from "node:path";
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../helpers/workspace.js";

/** Item 7: a re-run of a published version is a no-op, the completion of an interrupted run, or refused. */
describe("re-running a publish", () => {
  let ws: Workspace;
  let p: { app: string; dmg: string; notes: string };
  beforeAll(async () => {
    ws = await makeWorkspace();
    p = await ws.plugin("1.0.0", 100);
    const first = await runCli(ws.publishArgs(p, "1.0.0", ["--summary", "First release"]));
    expect(first.code, first.stderr).toBe(0);
  });
  afterAll(async () => {
    await rm(ws.dir, { recursive: true, force: true });
  });

  it("an identical re-run changes nothing and says so", async () => {
    const before = await snapshotTree(ws.storeDir);
    const again = await runCli(ws.publishArgs(p, "1.0.0", ["--summary", "First release"]));
    expect(again.code, again.stderr).toBe(0);
    // One line: the checks it repeated and the steps that had nothing to write are not printed.
    expect(again.stderr).toBe("bridge-plugin 1.0.0 is already published in this store, byte for byte: nothing to do\n");
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });

  const differing: Array<[string, () => Promise<string[]>, RegExp]> = [
    ["other notes", async () => { const f = path.join(ws.dir, "other-notes.md"); await writeFile(f, "- something else\n"); return ws.publishArgs({ ...p, notes: f }, "1.0.0", ["--summary", "First release"]); }, /different releaseNotes, releaseNotesList, releaseNotesMarkdown/],
    ["another summary", async () => ws.publishArgs(p, "1.0.0", ["--summary", "Another summary"]), /different summary$/m],
    ["another channel", async () => ws.publishArgs(p, "1.0.0", ["--summary", "First release", "--channel", "beta"]), /different channel$/m],
    ["another display name", async () => {
      const f = path.join(ws.dir, "renamed.json");
      await writeFile(f, JSON.stringify({ pluginId: "bridge-plugin", displayName: "Renamed", publisher: "Example Tools", appUrl: "https://updates.example.com", timezone: "America/New_York", store: `file://${ws.storeDir}` }));
      return [...ws.publishArgs(p, "1.0.0", ["--summary", "First release"]), "--config", f];
    }, /different displayName$/m],
  ];

  // Each refused re-run must leave the store as it was; they are independent, so they run at once.
  it.concurrent.each(differing)("a re-run with %s is refused with E_CONFLICT naming the fields, and writes nothing", async (_name, args, fields) => {
    const before = await snapshotTree(ws.storeDir);
    const res = await runCli(await args());
    expect(res.code, res.stderr).toBe(8);
    expect(res.stderr).toMatch(/relcast: error \[E_CONFLICT\]: version 1\.0\.0 is already published with a different /);
    expect(res.stderr.split("\n").find((l) => l.startsWith("relcast: error"))).toMatch(fields);
    expect(res.stderr).toMatch(/fix: published records are immutable/);
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });

  it("a re-run after a kill between record and downloads says which steps it completed; verify passes", async () => {
    const q = await ws.plugin("1.1.0", 110);
    const killed = await runCli(ws.publishArgs(q, "1.1.0"), { env: { RELCAST_FAILPOINT: "after:record" } });
    expect(killed.signal).toBe("SIGKILL");
    const again = await runCli(ws.publishArgs(q, "1.1.0"));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/bridge-plugin 1\.1\.0 was already partly published; this run completed the interrupted publish: downloads, latest, feeds, site/);
    const verify = await runCli(["verify", "--config", ws.configFile]);
    expect(verify.code, verify.stdout).toBe(0);
  });
});
