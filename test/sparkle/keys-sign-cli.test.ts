import { execFileSync } from "node:child_process";
import { createPrivateKey, randomBytes } from "node:crypto";
import { mkdtemp, readFile, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import nacl from "tweetnacl";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";

const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "relcast-keys-"));
});

function opensslSign(seed: Buffer, file: string): string {
  const pem = path.join(dir, `k-${seed.subarray(0, 4).toString("hex")}.pem`);
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" });
  execFileSync("sh", ["-c", 'umask 077; cat > "$1"', "sh", pem], { input: key.export({ format: "pem", type: "pkcs8" }) });
  return execFileSync("openssl", ["pkeyutl", "-sign", "-rawin", "-inkey", pem, "-in", file]).toString("base64");
}

/** Python `cryptography` checks a signature independently of our code. */
function pythonVerifies(publicKeyB64: string, sigB64: string, file: string): boolean {
  const script = `
import base64, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.exceptions import InvalidSignature
pub = Ed25519PublicKey.from_public_bytes(base64.b64decode(sys.argv[1]))
try:
    pub.verify(base64.b64decode(sys.argv[2]), open(sys.argv[3], "rb").read()); print("ok")
except InvalidSignature:
    print("bad")`;
  return execFileSync("python3", ["-c", script, publicKeyB64, sigB64, file]).toString().trim() === "ok";
}

describe("relcast keys", () => {
  it("generate writes a 0600 seed file, prints only the public key, and refuses to overwrite", async () => {
    const out = path.join(dir, "gen.key");
    const res = await runCli(["keys", "generate", "--out", out]);
    expect(res.code).toBe(0);
    const seedText = (await readFile(out, "utf8")).trim();
    expect(Buffer.from(seedText, "base64")).toHaveLength(32);
    expect((await stat(out)).mode & 0o777).toBe(0o600);
    const expectedPublic = Buffer.from(nacl.sign.keyPair.fromSeed(Buffer.from(seedText, "base64")).publicKey).toString("base64");
    expect(res.stdout.trim()).toBe(expectedPublic);
    expect(res.stdout + res.stderr).not.toContain(seedText);

    const again = await runCli(["keys", "generate", "--out", out]);
    expect(again.code).toBe(8);
    expect(again.stderr).toMatch(/already exists.*--force/s);
    expect((await readFile(out, "utf8")).trim()).toBe(seedText);

    const forced = await runCli(["keys", "generate", "--out", out, "--force"]);
    expect(forced.code).toBe(0);
    expect((await readFile(out, "utf8")).trim()).not.toBe(seedText);
  });

  it("public prints SUPublicEDKey for a seed file, stdin and the legacy 96-byte export", async () => {
    const seed = randomBytes(32);
    const pair = nacl.sign.keyPair.fromSeed(seed);
    const expected = Buffer.from(pair.publicKey).toString("base64");
    const seedFile = path.join(dir, "seed.key");
    await writeFile(seedFile, seed.toString("base64"));
    expect((await runCli(["keys", "public", "--key-file", seedFile])).stdout.trim()).toBe(expected);
    expect((await runCli(["keys", "public", "--key-file", "-"], { input: seed.toString("base64") })).stdout.trim()).toBe(expected);
    // Legacy generate_keys: 64-byte expanded secret (clamped scalar + prefix) then the public key.
    const legacy = Buffer.concat([Buffer.from(pair.secretKey.subarray(0, 32)), Buffer.from(pair.publicKey)]);
    const expanded = execFileSync("python3", ["-c", "import hashlib,sys;d=bytearray(hashlib.sha512(bytes.fromhex(sys.argv[1])).digest());d[0]&=248;d[31]&=127;d[31]|=64;print(bytes(d).hex())", seed.toString("hex")]).toString().trim();
    const legacyFile = path.join(dir, "legacy.key");
    await writeFile(legacyFile, Buffer.concat([Buffer.from(expanded, "hex"), legacy.subarray(32)]).toString("base64"));
    expect((await runCli(["keys", "public", "--key-file", legacyFile])).stdout.trim()).toBe(expected);
  });

  it("rejects a key of the wrong length and bad base64, naming the accepted lengths", async () => {
    const short = path.join(dir, "short.key");
    await writeFile(short, randomBytes(31).toString("base64"));
    const res = await runCli(["keys", "public", "--key-file", short]);
    expect(res.code).toBe(6);
    expect(res.stderr).toMatch(/31 bytes; expected 32 \(seed\) or 96/);
    const junk = path.join(dir, "junk.key");
    await writeFile(junk, "not*base64!");
    const bad = await runCli(["keys", "public", "--key-file", junk]);
    expect(bad.code).toBe(6);
    expect(bad.stderr).toMatch(/not valid base64/);
  });
});

describe("relcast sign", () => {
  it("prints sign_update's line, byte-equal to openssl, and verified by Python cryptography", async () => {
    const seed = randomBytes(32);
    const keyFile = path.join(dir, "sign.key");
    await writeFile(keyFile, `${seed.toString("base64")}\n`);
    const file = path.join(dir, "update.zip");
    await writeFile(file, randomBytes(5 * 1024 * 1024 + 3));
    const res = await runCli(["sign", file, "--ed-key-file", keyFile]);
    expect(res.code).toBe(0);
    const expectedSig = opensslSign(seed, file);
    expect(res.stdout).toBe(`sparkle:edSignature="${expectedSig}" length="${5 * 1024 * 1024 + 3}"\n`);
    expect(res.stdout + res.stderr).not.toContain(seed.toString("base64"));
    const onlySig = await runCli(["sign", file, "-p", "-f", keyFile]);
    expect(onlySig.stdout).toBe(`${expectedSig}\n`);
    const publicKey = Buffer.from(nacl.sign.keyPair.fromSeed(seed).publicKey).toString("base64");
    expect(pythonVerifies(publicKey, expectedSig, file)).toBe(true);
  });

  it("--verify exits 0 for a valid signature and 1 for a changed file or another key", async () => {
    const seed = randomBytes(32);
    const file = path.join(dir, "verify.bin");
    await writeFile(file, randomBytes(70_000));
    const sig = opensslSign(seed, file);
    const publicKey = Buffer.from(nacl.sign.keyPair.fromSeed(seed).publicKey).toString("base64");
    expect((await runCli(["sign", "--verify", file, sig, "--public-key", publicKey])).code).toBe(0);
    const otherKey = Buffer.from(nacl.sign.keyPair.fromSeed(randomBytes(32)).publicKey).toString("base64");
    expect((await runCli(["sign", "--verify", file, sig, "--public-key", otherKey])).code).toBe(1);
    await writeFile(file, Buffer.from("changed"), { flag: "a" });
    const changed = await runCli(["sign", "--verify", file, sig, "--public-key", publicKey]);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toMatch(/NOT valid/);
    const malformed = await runCli(["sign", "--verify", file, "abc", "--public-key", publicKey]);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/base64 of 64 bytes/);
  });

  it("names a missing file and a missing key", async () => {
    const missing = await runCli(["sign", path.join(dir, "nope.zip"), "-f", path.join(dir, "sign.key")]);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/cannot read .*nope\.zip \(ENOENT\)/);
    const file = path.join(dir, "nokey.bin");
    await writeFile(file, "x");
    const noKey = await runCli(["sign", file], { env: { RELCAST_SIGNING_KEY: "" } });
    expect(noKey.code).toBe(6);
    expect(noKey.stderr).toMatch(/no signing key given/);
  });
});
