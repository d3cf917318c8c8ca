import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { digestFile } from "../../src/core/file-digest.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "digest-"));
  dirs.push(dir);
  return dir;
}

/** coreutils' answer, an implementation apart from Node's. */
const sha256sum = (file: string): string => execFileSync("sha256sum", ["-b", file], { encoding: "utf8" }).split(" ")[0]!;

describe("digestFile: the disk image's and the deltas' SHA-256", () => {
  const MiB = 1 << 20;
  // Around the 1 MiB read size: none, one short read, exactly one read, one byte over, several reads and a short last one.
  it.each([0, 1, MiB - 1, MiB, MiB + 1, 3 * MiB + 12345])("%i bytes: the size and sha256sum's digest", async (size) => {
    const file = path.join(await tempDir(), "image.dmg");
    await writeFile(file, randomBytes(size));
    expect(await digestFile(file)).toEqual({ sha256: sha256sum(file), sizeBytes: size });
  });

  it("a signal aborted before or during the read rejects with its reason", async () => {
    const file = path.join(await tempDir(), "image.dmg");
    await writeFile(file, randomBytes(4 * MiB));
    const before = new AbortController();
    before.abort(new Error("stopped before"));
    await expect(digestFile(file, before.signal)).rejects.toThrow("stopped before");
    const during = new AbortController();
    const digest = digestFile(file, during.signal);
    during.abort(new Error("stopped during"));
    await expect(digest).rejects.toThrow("stopped during");
  });

  it("a missing file or a folder is an error, not a digest of nothing", async () => {
    const dir = await tempDir();
    await expect(digestFile(path.join(dir, "missing.dmg"))).rejects.toMatchObject({ code: "ENOENT" });
    await expect(digestFile(dir)).rejects.toMatchObject({ code: "EISDIR" });
  });
});
