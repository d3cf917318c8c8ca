import { describe, expect, it } from "vitest";
import { constantTimeEqual } from "../../src/gateway/constant-time.js";
import { hashSecret, parseSecretHash, verifySecret } from "../../src/gateway/secret-hash.js";
import { ConsentSeal } from "../../src/gateway/oauth/consent-csrf.js";

describe("secret hashing", () => {
  it("round-trips through scrypt and rejects other secrets", async () => {
    const stored = await hashSecret("s3cret-value");
    expect(stored).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(await verifySecret("s3cret-value", stored)).toBe(true);
    expect(await verifySecret("s3cret-valuE", stored)).toBe(false);
    expect(await hashSecret("s3cret-value")).not.toBe(stored);
  });

  it("refuses hashes with absurd cost parameters", () => {
    expect(parseSecretHash("scrypt$1073741824$8$1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA==")).toBeUndefined();
    expect(parseSecretHash("scrypt$1000$8$1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA==")).toBeUndefined();
  });

  it("compares in constant time regardless of length", () => {
    expect(constantTimeEqual("abc", "abc")).toBe(true);
    expect(constantTimeEqual("abc", "abcd")).toBe(false);
  });
});

describe("consent seal", () => {
  const seal = new ConsentSeal(Buffer.alloc(32, 7));
  const now = new Date("2025-03-01T10:00:00Z");

  it("opens what it sealed until the form expires", () => {
    const { field, nonce } = seal.seal({ clientId: "app", scope: "crm", state: "s" }, now);
    expect(seal.open(field, now)).toMatchObject({ clientId: "app", scope: "crm", state: "s", nonce });
    expect(seal.open(field, new Date(now.getTime() + 600_000))).toBeUndefined();
  });

  it("rejects altered payloads and other keys", () => {
    const { field } = seal.seal({ clientId: "app", scope: "crm" }, now);
    const [payload, mac] = field.split(".");
    const forged = Buffer.from(JSON.stringify({ clientId: "app", scope: "crm billing", nonce: "n", exp: 9e15 })).toString("base64url");
    expect(seal.open(`${forged}.${mac}`, now)).toBeUndefined();
    expect(new ConsentSeal(Buffer.alloc(32, 8)).open(`${payload}.${mac}`, now)).toBeUndefined();
  });
});
