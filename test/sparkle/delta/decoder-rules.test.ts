import { execFileSync } from "node:child_process";
import { crc32, deflateRawSync } from "node:zlib";
import { afterEach, describe, expect, it, vi } from "vitest";
import { openDecoder } from "../../../src/sparkle/delta/delta-decoder.js";

/** Decodes `body` as a delta body would be: written in, read out to the end, then the decoder's verdict. */
async function decode(name: "zlib" | "lzma", body: Buffer): Promise<{ bytes: number; problem: string | undefined }> {
  const d = await openDecoder(name);
  let bytes = 0;
  const read = (async () => {
    for await (const c of d.output) bytes += (c as Buffer).length;
  })();
  d.input.end(body);
  await read;
  const problem = await d.problem;
  d.stop();
  return { bytes, problem };
}

/** An xz stream whose LZMA2 dictionary-size byte is `dictByte` (block header CRC-32 fixed up), as a forger would make it. */
function xzWithDictionary(plain: Buffer, dictByte: number): Buffer {
  const b = Buffer.from(execFileSync("xz", ["-c", "-6"], { input: plain }));
  const at = 12; // the first block header, right after the stream header
  const size = (b[at]! + 1) * 4;
  const filter = b.subarray(at, at + size).indexOf(Buffer.from([0x21, 0x01]), 2);
  b[at + filter + 2] = dictByte;
  b.writeUInt32LE(crc32(b.subarray(at, at + size - 4)) >>> 0, at + size - 4);
  return b;
}

const plain = Buffer.from("a Sparkle delta body\n".repeat(200));
const xz = Buffer.from(execFileSync("xz", ["-c"], { input: plain }));
const dict64 = xzWithDictionary(plain, 28);
const dict128 = xzWithDictionary(plain, 30);

afterEach(() => vi.unstubAllEnvs());

describe.each([
  ["with xz on the PATH", false],
  ["without xz (the WebAssembly decoder)", true],
])("the lzma reader %s", (_label, hideXz) => {
  const lzma = (body: Buffer) => {
    if (hideXz) vi.stubEnv("PATH", "");
    return decode("lzma", body);
  };
  it("reads one or more streams with their null padding", async () => {
    expect(await lzma(xz)).toEqual({ bytes: plain.length, problem: undefined });
    expect(await lzma(Buffer.concat([xz, Buffer.alloc(8)]))).toEqual({ bytes: plain.length, problem: undefined });
    expect(await lzma(Buffer.concat([xz, xz]))).toEqual({ bytes: 2 * plain.length, problem: undefined });
  });
  it("refuses data after the stream, an empty body, and a dictionary over 64 MiB, with a message, not a crash", async () => {
    expect((await lzma(Buffer.concat([xz, Buffer.from("trailing junk")]))).problem).toMatch(/could not decompress it/);
    expect((await lzma(Buffer.alloc(0))).problem).toMatch(/could not decompress it/);
    expect((await lzma(Buffer.alloc(0))).problem).not.toMatch(/properties of null/);
    // 0x1c: 64 MiB, 0x1e: 128 MiB (LZMA2 dictionary byte: (2 | b & 1) << (b / 2 + 11)).
    expect(await lzma(dict64)).toEqual({ bytes: plain.length, problem: undefined });
    const big = (await lzma(dict128)).problem;
    expect(big).toMatch(/could not decompress it/);
    expect(big).not.toMatch(/error code \d/);
  });
});

describe("the zlib reader", () => {
  it("refuses bytes after the end of the DEFLATE stream", async () => {
    const raw = deflateRawSync(plain);
    expect(await decode("zlib", raw)).toEqual({ bytes: plain.length, problem: undefined });
    expect((await decode("zlib", Buffer.concat([raw, Buffer.from("junk")]))).problem).toMatch(/4 byte\(s\) follow the end/);
  });
});
