import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";

/** One item of a hand-made Sparkle delta (major version 3), written byte by byte as delta-format.ts describes. */
export interface RawItem {
  rel: string;
  commands: number;
  mode?: number;
  cloneIndex?: number;
  /** The length written in the command record (may lie). */
  dataLength?: number | bigint;
  /** Bytes appended to the body for this item. */
  data?: Buffer;
}

export const CMD = { delete: 1, extract: 2, modifyPermissions: 4, binaryDiff: 8, clone: 16 } as const;
export const S_IFREG = 0o100000;
export const S_IFLNK = 0o120000;
export const S_IFDIR = 0o040000;

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
}
function u64(n: number | bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
}

/** The decompressed body: header, path table, command records, end marker, then each item's data. */
export function rawBody(beforeHash: string, afterHash: string, items: readonly RawItem[]): Buffer {
  const table = Buffer.from(items.map((i) => `${i.rel}\0`).join(""), "utf8");
  const parts: Buffer[] = [u16(3), u16(1), Buffer.from(beforeHash, "hex"), Buffer.from(afterHash, "hex"), u64(table.length), table];
  for (const item of items) {
    const c = item.commands;
    parts.push(Buffer.from([c]));
    if (c & CMD.clone) {
      if (c & CMD.modifyPermissions) parts.push(u16(item.mode ?? 0o644));
      const index = Buffer.alloc(4);
      index.writeUInt32LE(item.cloneIndex ?? 0);
      parts.push(index);
      if (c & CMD.binaryDiff) parts.push(u64(item.dataLength ?? item.data?.length ?? 0));
    } else if (c & CMD.binaryDiff) {
      if (c & CMD.modifyPermissions) parts.push(u16(item.mode ?? 0o644));
      parts.push(u64(item.dataLength ?? item.data?.length ?? 0));
    } else if (c & CMD.extract) {
      parts.push(u16(item.mode!));
      const type = item.mode! & 0o170000;
      if (type === S_IFREG) parts.push(u64(item.dataLength ?? item.data?.length ?? 0));
      else if (type === S_IFLNK) parts.push(u16(Number(item.dataLength ?? item.data?.length ?? 0)));
    } else if (c & CMD.modifyPermissions) parts.push(u16(item.mode ?? 0o644));
  }
  parts.push(Buffer.from([0]));
  for (const item of items) if (item.data) parts.push(item.data);
  return Buffer.concat(parts);
}

/** Writes a delta file: "spk!", compression byte, metadata byte, then the body (bzip2 by the system's bzip2, or raw). */
export async function writeRawDelta(file: string, body: Buffer, compression: "none" | "bzip2", tail: Buffer = Buffer.alloc(0)): Promise<void> {
  const packed = compression === "none" ? body : execFileSync("bzip2", ["-9", "-c"], { input: body });
  await writeFile(file, Buffer.concat([Buffer.from("spk!", "latin1"), Buffer.from([compression === "none" ? 0 : 1, compression === "none" ? 0 : 9]), packed, tail]));
}

/**
 * A bzip2 bomb body tail: `copies` concatenated bzip2 streams of 64 MiB of
 * zeros each (bzip2 -dc reads concatenated streams as one), about 80 bytes a copy.
 */
export function zeroStreams(copies: number): Buffer {
  const one = execFileSync("bash", ["-c", "head -c 67108864 /dev/zero | bzip2 -9 -c"], { maxBuffer: 1 << 20 });
  return Buffer.concat(Array.from({ length: copies }, () => one));
}

/** A BSDIFN40 patch (raw blocks) with the given header fields and blocks. */
export function bsdiffn(newSize: number | bigint, control: Buffer, diff: Buffer, extra: Buffer): Buffer {
  return Buffer.concat([Buffer.from("BSDIFN40", "latin1"), u64(control.length), u64(diff.length), u64(newSize), control, diff, extra]);
}
