import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

/**
 * Publish with a changed file too big to diff: the delta ships it whole and
 * stores it (its bytes are random), the publish log names the file and why,
 * the delta is applied back and kept, and `verify` applies it again. "Too
 * big" is scaled down: a 1 MiB diff limit in the config and
 * RELCAST_DELTA_STORE_MIN_BYTES=1000000 (the defaults, 16 MiB and 64 MiB, are
 * in docs/deltas.md). Python reads the stored delta's xz body.
 */
let ws: Workspace;
const env = { RELCAST_DELTA_STORE_MIN_BYTES: "1000000" };
/** Over both limits (the 1 MiB diff limit, 1,000,000 bytes to store whole) and not much more: size is not the point. */
const SIZE = 1_200_000;
const unchanged = randomBytes(SIZE);

async function plugin(version: string, build: number): Promise<{ app: string; dmg: string; notes: string }> {
  const p = await ws.plugin(version, build);
  await writeFile(path.join(p.app, "Contents", "Resources", "weights-a.bin"), unchanged);
  await writeFile(path.join(p.app, "Contents", "Resources", "model.gguf"), randomBytes(SIZE));
  return p;
}

beforeAll(async () => {
  ws = await makeWorkspace({ deltas: { maximum: 2, compression: "lzma", diffLimitMiB: 1 } });
});
afterAll(async () => {
  await rm(ws.dir, { recursive: true, force: true });
});

describe("publish with a changed file over the diff limit", () => {
  let log = "";
  let record: Record<string, any>;
  beforeAll(async () => {
    const first = await runCli(ws.publishArgs(await plugin("1.0.0", 100), "1.0.0"), { env });
    expect(first.code, first.stderr).toBe(0);
    const second = await runCli(ws.publishArgs(await plugin("1.1.0", 110), "1.1.0", ["--json"]), { env });
    expect(second.code, second.stderr).toBe(0);
    log = second.stderr;
    record = JSON.parse(second.stdout) as Record<string, any>;
  });

  it("logs which file was shipped whole and why, and which was stored uncompressed", () => {
    expect(log).toContain("delta from 1.0.0: 1 changed file(s) shipped whole, not diffed, because the old or new file is over the 1 MiB diff limit");
    expect(log).toContain(`Contents/Resources/model.gguf (${SIZE} → ${SIZE} bytes)`);
    expect(log).toMatch(new RegExp(`delta from 1\\.0\\.0: 1 whole file\\(s\\) stored uncompressed .*Contents/Resources/model\\.gguf \\(${SIZE} of ${SIZE} bytes\\)`));
    expect(log).toContain("applied back: tree hash matches");
  });

  it("keeps the delta, which Python's lzma reads as one xz stream, and verify applies it", async () => {
    const deltas = record.autoupdate.deltas as Array<{ fromVersion: string; url: string; sizeBytes: number }>;
    expect(deltas.map((d) => d.fromVersion)).toEqual(["1.0.0"]);
    expect(deltas[0]!.sizeBytes).toBeGreaterThan(SIZE);
    const file = path.join(ws.storeDir, "releases", "1.1.0", path.basename(new URL(deltas[0]!.url).pathname));
    const parsed = JSON.parse(execFileSync("python3", [path.join(import.meta.dirname, "..", "sparkle", "delta", "read-delta.py"), file], { encoding: "utf8" })) as { compression: number; paths: string[] };
    expect(parsed.compression).toBe(2);
    expect(parsed.paths).toContain("/Contents/Resources/model.gguf");
    const verify = await runCli(["verify", "--config", ws.configFile], { env });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });
});
