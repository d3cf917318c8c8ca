/**
 * The container's compression on the writing side. Sparkle reads each mode
 * through Apple's Compression framework or libbz2 (SPUSparkleDeltaArchive):
 * - lzma (Sparkle's default): COMPRESSION_LZMA reads an .xz stream; we write
 *   one xz stream, one block (single-threaded), preset 6, CRC64 check, with the
 *   system's `xz`. Node has no LZMA encoder and no npm package offers a good
 *   one that installs without compiling on every Node relcast supports (see
 *   docs/sparkle.md), so lzma needs `xz` on the PATH;
 * - zlib: COMPRESSION_ZLIB is raw DEFLATE (RFC 1951, no zlib header or
 *   checksum), which Node's own zlib writes: no program needed;
 * - bzip2: one bzip2 stream at block size 9, as BZ2_bzWriteOpen(…, 9, …)
 *   writes it, with the system's `bzip2`;
 * - none: the payload as it is.
 * Without `deltas.compression`, deltas are lzma where `xz` is on the PATH
 * (smallest) and zlib elsewhere (stock macOS has no xz).
 *
 * Ranges of the payload judged incompressible (incompressible.ts: blocks of
 * big whole files) are stored rather than compressed in lzma (LZMA2
 * uncompressed chunks, xz-stored-ranges.ts) and zlib (DEFLATE stored blocks,
 * level 0 for those ranges) bodies; bzip2 has no stored form and compresses
 * everything; a payload without such ranges gives the same bytes as before.
 */
import { spawn } from "node:child_process";
import { createReadStream, createWriteStream } from "node:fs";
import { once } from "node:events";
import { pipeline } from "node:stream/promises";
import { open, stat } from "node:fs/promises";
import { constants as zlibConstants, createDeflateRaw } from "node:zlib";
import { commandOnPath } from "../../core/command-on-path.js";
import { RelcastError } from "../../core/errors.js";
import type { CompressionName } from "./delta-format.js";
import type { PayloadRange } from "./incompressible.js";
import { writeXzWithStoredRanges } from "./xz-stored-ranges.js";

/** lzma where `xz` is on the PATH, zlib (built into Node) elsewhere. */
export function defaultCompression(): CompressionName {
  return commandOnPath("xz") ? "lzma" : "zlib";
}

/** Why a mode cannot be written here, or undefined when it can. */
export function compressionUnavailable(name: CompressionName): string | undefined {
  const program = name === "lzma" ? "xz" : name === "bzip2" ? "bzip2" : undefined;
  if (!program || commandOnPath(program)) return undefined;
  return `${name} delta compression needs the ${program} program, which is not on the PATH`;
}

export function missingProgramError(name: CompressionName): RelcastError {
  const program = name === "lzma" ? "xz" : "bzip2";
  return new RelcastError(
    "E_INPUT",
    `${compressionUnavailable(name) ?? `cannot run ${program}`}.`,
    `Install ${program} (macOS: brew install ${program === "xz" ? "xz" : "bzip2"}; Debian: apt-get install ${program === "xz" ? "xz-utils" : "bzip2"}), or set deltas.compression to "zlib" (Sparkle reads it; nothing to install), or leave it unset to use lzma only where xz is present.`,
  );
}

function externalCompressor(name: "lzma" | "bzip2"): { cmd: string; args: string[] } {
  return name === "lzma"
    ? { cmd: "xz", args: ["--format=xz", "--check=crc64", "-6", "--threads=1", "-c"] }
    : { cmd: "bzip2", args: ["-9", "-c"] };
}

/**
 * Compresses `input` into `output`, appending (the container's 6-byte header is already there).
 * `stored`: ranges of `input` to store uncompressed (sorted, apart), for lzma and zlib.
 */
export async function compressFile(name: CompressionName, input: string, output: string, stored: readonly PayloadRange[] = []): Promise<void> {
  if (name === "none") return pipeline(createReadStream(input), createWriteStream(output, { flags: "a" }));
  if (name === "zlib") {
    if (stored.length > 0) return deflateWithStoredRanges(input, output, stored);
    return pipeline(createReadStream(input), createDeflateRaw({ level: 9 }), createWriteStream(output, { flags: "a" }));
  }
  if (compressionUnavailable(name)) throw missingProgramError(name);
  if (name === "lzma" && stored.length > 0) {
    return writeXzWithStoredRanges(input, output, stored, (await stat(input)).size);
  }
  const t = externalCompressor(name);
  const sink = createWriteStream(output, { flags: "a" });
  const sinkClosed = once(sink, "close");
  const child = spawn(t.cmd, t.args, { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr = (stderr + s).slice(0, 2000)));
  try {
    await new Promise<void>((resolve, reject) => {
      child.once("error", () => reject(missingProgramError(name)));
      child.once("spawn", () => resolve());
    });
  } catch (err) {
    sink.destroy();
    throw err;
  }
  const source = createReadStream(input);
  source.on("error", (err) => child.stdin.destroy(err));
  child.stdin.on("error", () => undefined);
  source.pipe(child.stdin);
  child.stdout.pipe(sink);
  const [code] = (await once(child, "close")) as [number | null];
  await sinkClosed;
  if (code !== 0) throw new RelcastError("E_INTERNAL", `${t.cmd} could not compress the delta (exit ${code}): ${stderr.trim() || "no message"}.`);
}

/**
 * One raw DEFLATE stream at level 9, switched to level 0 (stored blocks) for
 * the stored ranges and back: zlib's deflateParams, which flushes what came
 * before at the old level (an empty stored block marks each switch).
 */
async function deflateWithStoredRanges(input: string, output: string, stored: readonly PayloadRange[]): Promise<void> {
  const deflate = createDeflateRaw({ level: 9 });
  const sink = createWriteStream(output, { flags: "a" });
  const done = pipeline(deflate, sink);
  // Awaited below, after the input is in; a write error meanwhile must not go unhandled.
  done.catch(() => undefined);
  const src = await open(input, "r");
  try {
    const { size } = await src.stat();
    const buf = Buffer.allocUnsafe(1 << 20);
    const setLevel = (level: number): Promise<void> => new Promise((resolve) => deflate.params(level, zlibConstants.Z_DEFAULT_STRATEGY, () => resolve()));
    let pos = 0;
    const copy = async (end: number): Promise<void> => {
      while (pos < end) {
        const { bytesRead } = await src.read(buf, 0, Math.min(buf.length, end - pos), pos);
        if (bytesRead === 0) throw new RelcastError("E_INTERNAL", "the delta payload shrank while it was compressed.");
        if (!deflate.write(Buffer.from(buf.subarray(0, bytesRead)))) await once(deflate, "drain");
        pos += bytesRead;
      }
    };
    for (const r of stored) {
      await copy(r.start);
      await setLevel(0);
      await copy(r.end);
      await setLevel(9);
    }
    await copy(size);
    deflate.end();
  } catch (err) {
    deflate.destroy(err as Error);
    throw err;
  } finally {
    await src.close();
  }
  await done;
}
