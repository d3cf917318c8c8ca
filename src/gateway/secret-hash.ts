import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";

/**
 * Client secrets and user passwords are stored only as scrypt hashes in the
 * form `scrypt$<N>$<r>$<p>$<salt base64>$<hash base64>` (the parameters travel
 * with the hash so they can be raised later without breaking old entries).
 */
export const SECRET_HASH_PATTERN = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;

const DEFAULT_PARAMS = { N: 16384, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
// Upper bounds keep a hostile or mistyped config from pinning the CPU or memory.
const MAX_N = 1 << 20;
const MAX_R = 32;
const MAX_P = 16;

interface ParsedHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

function derive(secret: string, salt: Buffer, N: number, r: number, p: number, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, length, { N, r, p, maxmem: 256 * N * r + 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export function parseSecretHash(text: string): ParsedHash | undefined {
  const m = SECRET_HASH_PATTERN.exec(text);
  if (!m) return undefined;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const powerOfTwo = N > 1 && (N & (N - 1)) === 0;
  if (!powerOfTwo || N > MAX_N || r < 1 || r > MAX_R || p < 1 || p > MAX_P) return undefined;
  const salt = Buffer.from(m[4]!, "base64");
  const hash = Buffer.from(m[5]!, "base64");
  if (salt.length < 8 || hash.length < 16) return undefined;
  return { N, r, p, salt, hash };
}

export async function hashSecret(secret: string): Promise<string> {
  const { N, r, p } = DEFAULT_PARAMS;
  const salt = randomBytes(16);
  const hash = await derive(secret, salt, N, r, p, KEY_LENGTH);
  return `scrypt$${N}$${r}$${p}$${salt.toString("base64")}$${hash.toString("base64")}`;
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const parsed = parseSecretHash(stored);
  if (!parsed) return false;
  const actual = await derive(secret, parsed.salt, parsed.N, parsed.r, parsed.p, parsed.hash.length);
  return timingSafeEqual(actual, parsed.hash);
}

let dummyHash: Promise<string> | undefined;

/**
 * Burns the same scrypt work as a real check, for unknown client ids and user
 * names, so response time does not reveal which ids exist.
 */
export async function verifyAgainstDummy(secret: string): Promise<false> {
  dummyHash ??= hashSecret("relcast-dummy-secret");
  await verifySecret(secret, await dummyHash);
  return false;
}
