import { createHash } from "node:crypto";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

async function findFile(dir: string, test: (name: string) => boolean): Promise<string> {
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) if (e.isFile() && test(e.name)) return path.join(e.parentPath, e.name);
  throw new Error(`no such file under ${dir}`);
}

/**
 * A release whose zip relcast's readers refuse as a bundle (here a name with a backslash, which earlier relcast
 * let through preflight) can be no delta's base. A later publish skips the delta from it with a warning and
 * publishes; it is not blocked for good.
 */
describe("an old release whose zip cannot be a delta base", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await makeWorkspace();
    const config = JSON.parse(await readFile(ws.configFile, "utf8")) as Record<string, unknown>;
    delete config.deltas;
    await writeFile(ws.configFile, JSON.stringify(config));
  });
  afterAll(async () => {
    await rm(ws.dir, { recursive: true, force: true });
  });

  it("makes the deltas step warn and skip that delta; the publish succeeds", async () => {
    const p1 = await ws.plugin("1.0.0", 100);
    await writeFile(path.join(p1.app, "Contents", "Resources", "x_y"), "hi");
    const first = await runCli(ws.publishArgs(p1, "1.0.0", ["--no-deltas"]));
    expect(first.code, first.stderr).toBe(0);
    // The zip as an earlier relcast stored it: the entry x_y named x\y (same length), its record pinning those bytes.
    const zip = await findFile(ws.storeDir, (n) => n.endsWith("1.0.0.zip"));
    const bytes = await readFile(zip);
    const from = Buffer.from("Resources/x_y");
    let count = 0;
    for (let at = bytes.indexOf(from); at >= 0; at = bytes.indexOf(from, at + 1), count++) Buffer.from("Resources/x\\y").copy(bytes, at);
    expect(count).toBe(2); // the local header and the central directory
    await writeFile(zip, bytes);
    const recordFile = await findFile(ws.storeDir, (n) => n === "release.json");
    const record = JSON.parse(await readFile(recordFile, "utf8")) as { autoupdate: { sha256: string } };
    record.autoupdate.sha256 = createHash("sha256").update(bytes).digest("hex");
    await writeFile(recordFile, JSON.stringify(record, null, 2));

    const p2 = await ws.plugin("1.1.0", 110);
    const second = await runCli(ws.publishArgs(p2, "1.1.0", ["--json"]));
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/delta from 1\.0\.0 skipped: its zip cannot be a delta base \(Cannot read .*1\.0\.0\.zip as a bundle: unsafe entry name .*x\\\\y.*holds a backslash/);
    const published = JSON.parse(second.stdout) as { autoupdate: { deltas?: unknown[] } };
    expect(published.autoupdate.deltas ?? []).toEqual([]);

    // verify names what the stored zip breaks, by the same name rule (its rules column).
    const verify = await runCli(["verify", "--config", ws.configFile, "--store", `file://${ws.storeDir}`]);
    expect(verify.code, verify.stdout + verify.stderr).not.toBe(0);
    expect(verify.stdout + verify.stderr).toMatch(/entry name "[^"]*Resources\/x\\\\y" "x\\\\y" holds a backslash/);
  });
});
