import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { saveStore, type SavedStore } from "../helpers/release-kit.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../helpers/workspace.js";

/** Issue 33 item 5: input is taken as meant or refused, never silently changed. */
describe("input is taken as meant or refused", () => {
  // Every test starts from the same store: 1.0.0 published at 2026-02-28T12:00:00Z. It is published once
  // and the store folder is put back to that state before each test (no test here is about that publish).
  let shared: Workspace;
  let saved: SavedStore;
  beforeAll(async () => {
    shared = await makeWorkspace();
    const p = await shared.plugin("1.0.0", 100);
    const res = await runCli(shared.publishArgs(p, "1.0.0", ["--published-at", "2026-02-28T12:00:00Z"]));
    expect(res.code, res.stderr).toBe(0);
    saved = await saveStore(shared);
  });
  afterAll(async () => {
    if (shared) await rm(shared.dir, { recursive: true, force: true });
  });
  async function published(): Promise<Workspace> {
    await saved.restore();
    return shared;
  }

  it.each([
    ["2026-02-30T00:00:00Z", "names day 30 of February 2026, which has 28 days"],
    ["2026-04-31T10:00:00+02:00", "names day 31 of April 2026, which has 30 days"],
    ["2026-03-01T25:00:00Z", "has hour 25"],
    ["2026-03-01T10:00:00", "names no time zone"],
  ])("--published-at %s is refused (exit 2) and nothing is written", async (at, reason) => {
    const ws = await published();
    const before = await snapshotTree(ws.storeDir);
    const p = await ws.plugin("1.1.0", 110);
    const res = await runCli(ws.publishArgs(p, "1.1.0", ["--published-at", at]));
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toContain(`--published-at "${at}" ${reason}`);
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });

  it("a valid --published-at is kept to the millisecond", async () => {
    const ws = await published();
    const catalog = JSON.parse(await readFile(path.join(ws.storeDir, "releases", "catalog.json"), "utf8"));
    expect(catalog.versions[0].publishedAtIso).toBe("2026-02-28T12:00:00.000Z");
  });

  // Each casing is its own refusal of the same store, and writes nothing (checked after each); the publish to a
  // really new channel then runs once: after refusals that wrote nothing its store is the same for every casing.
  it("channel Stable, STABLE or sTable beside the existing stable is refused (exit 4) naming stable; a really new channel still publishes", async () => {
    const ws = await published();
    const before = await snapshotTree(ws.storeDir);
    const p = await ws.plugin("1.1.0", 110);
    for (const channel of ["Stable", "STABLE", "sTable"]) {
      const res = await runCli(ws.publishArgs(p, "1.1.0", ["--channel", channel]));
      expect(res.code, `${channel}: ${res.stderr}`).toBe(4);
      expect(res.stderr, channel).toContain(`channel "${channel}" differs from the existing channel "stable" only in case`);
      expect(res.stderr, channel).toContain("--channel stable");
      expect(await snapshotTree(ws.storeDir), `${channel} wrote nothing`).toEqual(before);
    }
    // A channel that is really new, and the existing one spelled exactly, still publish.
    const beta = await runCli(ws.publishArgs(p, "1.1.0", ["--channel", "beta"]));
    expect(beta.code, beta.stderr).toBe(0);
  });

  it("a record read from the store with an impossible date is a problem, not a rolled-over date", async () => {
    const ws = await published();
    const file = path.join(ws.storeDir, "releases", "catalog.json");
    const catalog = JSON.parse(await readFile(file, "utf8"));
    catalog.versions[0].publishedAtIso = "2026-02-30T00:00:00.000Z";
    await writeFile(file, JSON.stringify(catalog));
    const res = await runCli(["verify", "--config", ws.configFile]);
    expect(res.code, res.stdout + res.stderr).toBe(11);
    expect(res.stdout + res.stderr).toContain("day 30 of February 2026");
  });
});
