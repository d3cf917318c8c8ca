import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hmacSha256Base64, prepareHmacKeys } from "../../src/hmac/keyed-hmac.js";

const reference = (secret: string, message: string) => createHmac("sha256", Buffer.from(secret, "utf8")).update(message, "utf8").digest("base64");

describe("HMAC-SHA256 with key pads kept per secret", () => {
  it("is createHmac's result for short, block-sized, long and non-ASCII keys and messages", () => {
    const secrets = ["", "k", "hmac-secret-for-acme-crm-0001", "x".repeat(64), "y".repeat(65), "z".repeat(300), "clé-secrète-ключ-🔑"];
    // Around the scratch buffer's bound (2,730 UTF-16 units always fit; longer messages get a buffer of their own), and far past it.
    const messages = ["", "date: Tue, 15 Nov 1994 08:12:31 GMT\nGET /v1/x?y=1 HTTP/1.1", "ü€😀".repeat(50), "a".repeat(2730), "€".repeat(2731), "b".repeat(8192), "😀".repeat(40_000)];
    for (const secret of secrets) {
      for (const message of messages) {
        expect(hmacSha256Base64(secret, message), `${secret} / ${message}`).toBe(reference(secret, message));
        expect(hmacSha256Base64(secret, message), "second use of the kept pads").toBe(reference(secret, message));
      }
    }
  });

  it("stays right past its bound of kept secrets", () => {
    prepareHmacKeys(Array.from({ length: 5000 }, (_, i) => `prepared-secret-${i}`));
    for (const secret of ["prepared-secret-1", "prepared-secret-4999", "never-prepared-secret"]) {
      expect(hmacSha256Base64(secret, "message")).toBe(reference(secret, "message"));
    }
  });
});

