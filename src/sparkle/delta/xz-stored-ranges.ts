/**
 * An lzma delta body with some ranges stored rather than compressed, still
 * one standard .xz stream with one block (the form Sparkle's COMPRESSION_LZMA
 * reader and `xz -6` itself produce), so every reader that read relcast's
 * lzma deltas before reads these:
 *
 *   stream header (CRC32 check) · block header (one LZMA2 filter, 8 MiB
 *   dictionary, as preset 6) · LZMA2 chunks · block padding · CRC32 of the
 *   payload · index (one record) · stream footer
 *
 * The LZMA2 chunks of each compressed range come from `xz --format=raw
 * --lzma2=preset=6` (its first chunk resets the dictionary and state; its
 * end marker is dropped), those of a stored range are LZMA2's own
 * uncompressed chunks (control 1, dictionary reset, then 2; at most 64 KiB
 * each), the same chunks xz writes for data it cannot shrink. Storing costs
 * 3 bytes per 64 KiB and runs at disk speed. The xz format itself
 * (tukaani.org/xz/xz-file-format.txt) is what is followed here; no encoder
 * library for Node writes LZMA2 (see docs/sparkle.md).
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { open, type FileHandle } from "node:fs/promises";
import { crc32 } from "node:zlib";
import { RelcastError } from "../../core/errors.js";
import type { PayloadRange } from "./incompressible.js";

const STREAM_MAGIC = Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]);
const CHECK_CRC32 = 0x01;
const LZMA2_FILTER_ID = 0x21;
/** Dictionary size 8 MiB (preset 6): 2 << (22 / 2 + 11). */
const DICT_PROPS_8MIB = 22;
const CHUNK = 64 * 1024;
const READ = 1 << 20;

function u32le(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0);
  return b;
}

/** xz's multibyte integer: 7 bits a byte, low bits first. */
function varint(value: number): Buffer {
  const out: number[] = [];
  let v = BigInt(value);
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
}

const pad4 = (n: number): Buffer => Buffer.alloc((4 - (n % 4)) % 4);

function streamFlags(): Buffer {
  return Buffer.from([0x00, CHECK_CRC32]);
}

function blockHeader(): Buffer {
  // Size byte, flags (one filter, no sizes), filter id, props size, props, padding to 8, then CRC32 → 12 bytes.
  const body = Buffer.concat([Buffer.from([12 / 4 - 1, 0x00, LZMA2_FILTER_ID, 0x01, DICT_PROPS_8MIB]), Buffer.alloc(3)]);
  return Buffer.concat([body, u32le(crc32(body))]);
}

/** Writes `input`'s bytes as one .xz stream, appending to `output`; the bytes in `stored` are stored, not compressed. */
export async function writeXzWithStoredRanges(input: string, output: string, stored: readonly PayloadRange[], size: number): Promise<void> {
  const src = await open(input, "r");
  const out = await open(output, "a");
  try {
    const flags = streamFlags();
    await out.write(Buffer.concat([STREAM_MAGIC, flags, u32le(crc32(flags))]));
    const header = blockHeader();
    await out.write(header);
    let compressed = 0;
    let check = 0;
    const emit = async (bytes: Buffer): Promise<void> => {
      await out.write(bytes);
      compressed += bytes.length;
    };
    const segments: Array<PayloadRange & { store: boolean }> = [];
    let at = 0;
    for (const r of stored) {
      if (r.start > at) segments.push({ start: at, end: r.start, store: false });
      segments.push({ ...r, store: true });
      at = r.end;
    }
    if (at < size || segments.length === 0) segments.push({ start: at, end: size, store: false });

    for (const segment of segments) {
      if (segment.end === segment.start) continue;
      if (segment.store) {
        let first = true;
        const buf = Buffer.allocUnsafe(READ);
        for (let pos = segment.start; pos < segment.end; ) {
          const { bytesRead } = await src.read(buf, 0, Math.min(READ, segment.end - pos), pos);
          if (bytesRead === 0) throw new RelcastError("E_INTERNAL", "the delta payload shrank while it was compressed.");
          const data = buf.subarray(0, bytesRead);
          check = crc32(data, check);
          const parts: Buffer[] = [];
          for (let i = 0; i < data.length; i += CHUNK) {
            const piece = data.subarray(i, Math.min(i + CHUNK, data.length));
            parts.push(Buffer.from([first ? 0x01 : 0x02, (piece.length - 1) >> 8, (piece.length - 1) & 0xff]), piece);
            first = false;
          }
          await emit(Buffer.concat(parts));
          pos += bytesRead;
        }
      } else {
        check = await compressRange(src, segment, emit, check);
      }
    }
    await emit(Buffer.from([0x00]));
    await out.write(pad4(compressed));
    await out.write(u32le(check));

    const unpadded = header.length + compressed + 4;
    const indexBody = Buffer.concat([Buffer.from([0x00]), varint(1), varint(unpadded), varint(size)]);
    const index = Buffer.concat([indexBody, pad4(indexBody.length)]);
    await out.write(Buffer.concat([index, u32le(crc32(index))]));
    const footerBody = Buffer.concat([u32le((index.length + 4) / 4 - 1), flags]);
    await out.write(Buffer.concat([u32le(crc32(footerBody)), footerBody, Buffer.from("YZ", "latin1")]));
  } finally {
    await src.close();
    await out.close();
  }
}

/** One range through `xz --format=raw`, its chunks passed to `emit` without the end marker; answers the running CRC32. */
async function compressRange(src: FileHandle, range: PayloadRange, emit: (bytes: Buffer) => Promise<void>, check: number): Promise<number> {
  const child = spawn("xz", ["--format=raw", "--lzma2=preset=6", "--threads=1", "-c"], { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr = (stderr + s).slice(0, 2000)));
  const closed = once(child, "close") as Promise<[number | null]>;
  closed.catch(() => undefined);
  child.stdin.on("error", () => undefined);
  const feeding = (async () => {
    const buf = Buffer.allocUnsafe(READ);
    for (let pos = range.start; pos < range.end; ) {
      const { bytesRead } = await src.read(buf, 0, Math.min(READ, range.end - pos), pos);
      if (bytesRead === 0) throw new RelcastError("E_INTERNAL", "the delta payload shrank while it was compressed.");
      const data = Buffer.from(buf.subarray(0, bytesRead));
      check = crc32(data, check);
      if (!child.stdin.write(data)) await once(child.stdin, "drain");
      pos += bytesRead;
    }
    child.stdin.end();
  })();
  feeding.catch(() => child.kill("SIGKILL"));
  // Hold back the last byte of what came so far: the stream's last byte is LZMA2's end marker.
  let held: Buffer | undefined;
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    if (chunk.length === 0) continue;
    if (held) await emit(held);
    held = Buffer.from(chunk);
    if (held.length > 1) {
      await emit(held.subarray(0, held.length - 1));
      held = held.subarray(held.length - 1);
    }
  }
  await feeding;
  const [code] = await closed;
  if (code !== 0 || !held || held[0] !== 0x00) {
    throw new RelcastError("E_INTERNAL", `xz could not compress the delta (exit ${code}): ${stderr.trim() || "its raw LZMA2 output did not end with the end marker"}.`);
  }
  return check;
}
