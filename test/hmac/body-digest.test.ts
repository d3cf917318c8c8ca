import { describe, expect, it } from "vitest";
import { bodySha256, checkDigestHeader, createBodyDigest, digestHeaderValue, requiresDigest } from "../../src/hmac/index.js";
import { RESERIALISED_DIGEST } from "./fixed-vectors.js";

describe("body digest", () => {
  it("matches independently computed values (Python hashlib)", () => {
    expect(digestHeaderValue()).toBe("SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
    expect(digestHeaderValue('{"a":1}')).toBe("SHA-256=AVq9f1zFei3ZS3WQ8ErYCEJzkF7jPsXOvq5iJ2qX+GI=");
    expect(digestHeaderValue(Buffer.from('{"a": 1}'))).toBe(RESERIALISED_DIGEST);
  });

  it("gives the same hash streamed in any chunking", () => {
    const body = Buffer.from("x".repeat(10_000) + "é".repeat(333));
    for (const size of [1, 7, 64, 4096, body.length]) {
      const stream = createBodyDigest();
      for (let i = 0; i < body.length; i += size) stream.update(body.subarray(i, i + size));
      expect(stream.finish().equals(bodySha256(body)), `chunks of ${size}`).toBe(true);
    }
  });

  it("checks a received header against a hash", () => {
    const hash = bodySha256('{"a":1}');
    expect(checkDigestHeader(digestHeaderValue('{"a":1}'), hash)).toEqual({ ok: true });
    expect(checkDigestHeader(RESERIALISED_DIGEST, hash)).toMatchObject({ ok: false, mismatch: true, expected: digestHeaderValue('{"a":1}') });
    expect(checkDigestHeader("sha-256=AVq9f1zFei3ZS3WQ8ErYCEJzkF7jPsXOvq5iJ2qX+GI=", hash)).toMatchObject({ ok: false, mismatch: false });
    expect(checkDigestHeader("SHA-256=AVq9f1zFei3ZS3WQ8ErYCEJzkF7jPsXOvq5iJ2qX+GJ=", hash)).toMatchObject({ ok: false, mismatch: false });
  });

  it("requires a Digest for POST, PUT, PATCH and DELETE only", () => {
    expect(["POST", "PUT", "PATCH", "DELETE"].every(requiresDigest)).toBe(true);
    expect(["GET", "HEAD", "OPTIONS", "TRACE"].some(requiresDigest)).toBe(false);
  });
});
