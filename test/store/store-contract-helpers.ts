import { createHash, randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { expect } from "vitest";
import { contentTypeFor } from "../../src/store/content-types.js";
import type { ObjectMeta } from "../../src/store/object-store.js";

/** Small helpers of the store contract suite. */

export async function streamToBuffer(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

export async function writeRandomFile(file: string, bytes: number): Promise<string> {
  const hash = createHash("sha256");
  const chunk = 1024 * 1024;
  async function* source() {
    for (let done = 0; done < bytes; done += chunk) {
      const part = randomBytes(Math.min(chunk, bytes - done));
      hash.update(part);
      yield part;
    }
  }
  await pipeline(source(), createWriteStream(file));
  return hash.digest("hex");
}

export type HeaderCheck = (meta: ObjectMeta | undefined, want: { contentType: string; cacheControl?: string }) => void;

export function headerCheck(mode: "stored" | "derived"): HeaderCheck {
  return (meta, want) => {
    expect(meta).toBeDefined();
    if (mode === "stored") {
      expect(meta?.contentType).toBe(want.contentType);
      expect(meta?.cacheControl).toBe(want.cacheControl);
    } else {
      expect(meta?.contentType).toBe(contentTypeFor(meta!.key));
      expect(meta?.cacheControl).toBeUndefined();
    }
  };
}
