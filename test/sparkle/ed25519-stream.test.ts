import { execFileSync } from "node:child_process";
import { createHash, createPrivateKey, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import nacl from "tweetnacl";
import { describe, expect, it } from "vitest";
import { derivePublicKey, expandSeed, signAndCheck, signEd25519, startSignature, verifyEd25519 } from "../../src/sparkle/ed25519-stream.js";
import { parseSigningKey } from "../../src/sparkle/signing-key.js";

const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

describe("streaming Ed25519", () => {
  it("matches openssl pkeyutl byte for byte on a file", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-ed-"));
    const seed = randomBytes(32);
    const pem = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" }).export({ format: "pem", type: "pkcs8" });
    await writeFile(path.join(dir, "key.pem"), pem);
    const message = path.join(dir, "message.bin");
    await writeFile(message, randomBytes(3 * 1024 * 1024 + 17));
    const ours = await signEd25519(expandSeed(seed), { file: message });
    const theirs = execFileSync("openssl", ["pkeyutl", "-sign", "-rawin", "-inkey", path.join(dir, "key.pem"), "-in", message]);
    expect(ours.equals(theirs)).toBe(true);
  });

  it("a signature whose first pass is fed in pieces as the file is written equals openssl's, and checks itself", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-ed-"));
    const seed = randomBytes(32);
    const pem = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" }).export({ format: "pem", type: "pkcs8" });
    await writeFile(path.join(dir, "key.pem"), pem);
    const bytes = randomBytes(5 * 1024 * 1024 + 3);
    const message = path.join(dir, "message.bin");
    await writeFile(message, bytes);
    const started = startSignature(expandSeed(seed));
    for (let at = 0; at < bytes.length; at += 100_003) started.update(bytes.subarray(at, at + 100_003));
    const { signature, verified } = await signAndCheck(expandSeed(seed), { file: message }, started);
    const theirs = execFileSync("openssl", ["pkeyutl", "-sign", "-rawin", "-inkey", path.join(dir, "key.pem"), "-in", message]);
    expect(signature.equals(theirs)).toBe(true);
    expect(verified).toBe(true);
    // A key whose public half is not its secret's: the self-check says so.
    const damaged = { ...expandSeed(seed), publicKey: expandSeed(randomBytes(32)).publicKey };
    expect((await signAndCheck(damaged, { file: message })).verified).toBe(false);
    await rm(dir, { recursive: true, force: true });
  });

  it("matches tweetnacl (pure-JS reference) for random messages and rejects tampering", async () => {
    for (let i = 0; i < 20; i++) {
      const seed = randomBytes(32);
      const msg = randomBytes(i * 37);
      const ref = nacl.sign.keyPair.fromSeed(seed);
      const ours = await signEd25519(expandSeed(seed), msg);
      expect(Buffer.from(nacl.sign.detached(msg, ref.secretKey)).equals(ours)).toBe(true);
      expect(await verifyEd25519(ref.publicKey, ours, msg)).toBe(true);
      const bad = Buffer.from(ours);
      bad[i % 64]! ^= 1;
      expect(await verifyEd25519(ref.publicKey, bad, msg)).toBe(false);
    }
  });

  it("a legacy 96-byte key (expanded secret + public key) signs exactly like its seed", async () => {
    const seed = randomBytes(32);
    const h = createHash("sha512").update(seed).digest();
    h[0]! &= 248;
    h[31]! &= 127;
    h[31]! |= 64;
    const seedKey = parseSigningKey(seed.toString("base64"), "test seed");
    const legacy = parseSigningKey(Buffer.concat([h, seedKey.publicKey]).toString("base64"), "test legacy");
    expect(legacy.publicKeyBase64).toBe(seedKey.publicKeyBase64);
    const msg = randomBytes(1000);
    expect((await signEd25519(legacy, msg)).equals(await signEd25519(seedKey, msg))).toBe(true);
  });

  it("a seed's public key (from OpenSSL) is tweetnacl's and the one its scalar yields on the curve", () => {
    for (let i = 0; i < 8; i++) {
      const seed = randomBytes(32);
      const key = expandSeed(seed);
      expect(key.publicKey.equals(Buffer.from(nacl.sign.keyPair.fromSeed(seed).publicKey))).toBe(true);
      expect(key.publicKey.equals(derivePublicKey(key))).toBe(true);
    }
  });

  it("refuses a legacy key whose halves do not belong together", () => {
    const bogus = Buffer.concat([randomBytes(64), randomBytes(32)]).toString("base64");
    expect(() => parseSigningKey(bogus, "bogus")).toThrow(/inconsistent/);
  });
});

describe("verifying with a challenge hashed elsewhere, and with OpenSSL on a buffer", () => {
  it("accepts the right signature and refuses a changed message, signature or key, like the streaming verifier", async () => {
    const { challengePrefix, verifyEd25519Buffered, verifyEd25519Challenge } = await import("../../src/sparkle/ed25519-stream.js");
    const seed = randomBytes(32);
    const key = expandSeed(seed);
    const message = randomBytes(100_000);
    const signature = await signEd25519(key, message);
    const challenge = (m: Buffer, pub: Buffer, sig: Buffer) => createHash("sha512").update(challengePrefix(pub, sig)).update(m).digest();
    const other = Buffer.from(message);
    other[500] = other[500]! ^ 1;
    const badSig = Buffer.from(signature);
    badSig[40] = badSig[40]! ^ 1;
    const otherKey = expandSeed(randomBytes(32)).publicKey;
    for (const [m, pub, sig, ok] of [
      [message, key.publicKey, signature, true],
      [other, key.publicKey, signature, false],
      [message, key.publicKey, badSig, false],
      [message, otherKey, signature, false],
    ] as const) {
      expect(verifyEd25519Challenge(pub, sig, challenge(m, Buffer.from(pub), sig))).toBe(ok);
      expect(await verifyEd25519Buffered(pub, sig, m)).toBe(ok);
      expect(await verifyEd25519(pub, sig, m)).toBe(ok);
    }
    expect(await verifyEd25519Buffered(Buffer.alloc(31), signature, message)).toBe(false);
  });
});
