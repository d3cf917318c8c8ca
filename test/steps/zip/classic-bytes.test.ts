import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { zipBundle } from "../../../src/steps/zip/reproducible-zip.js";
import { makeFixedBundle } from "../../helpers/fixed-bundle.js";

/**
 * A bundle under every ZIP64 threshold keeps the exact bytes relcast wrote
 * before ZIP64 support: the SHA-256 below is what the writer of 2026-11-27
 * (commit 680f094, classic zips only) made of this bundle. Its contents are
 * made from fixed text and a SHA-256 counter stream, so they are the same on
 * every machine (with the zlib Node ships: deflate's output is zlib's).
 */
const GOLDEN_SHA256 = "7ac1beac0245cdda11e440ac6fdf1fe77cab7fe95258df32698de39bafa2ff72";

describe("a bundle below the ZIP64 thresholds", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-classic-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("zips to the same bytes as the classic-only writer did, with no ZIP64 record", async () => {
    const zip = await zipBundle(await makeFixedBundle(dir), path.join(dir, "fixed.zip"));
    const bytes = await readFile(zip.file);
    expect(zip.sha256).toBe(GOLDEN_SHA256);
    expect(bytes.includes(Buffer.from([0x50, 0x4b, 0x06, 0x06]))).toBe(false);
    expect(bytes.includes(Buffer.from([0x50, 0x4b, 0x06, 0x07]))).toBe(false);
  });
});
