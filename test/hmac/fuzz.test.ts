import { describe, expect, it } from "vitest";
import { formatHttpDate, parseAuthorization, parseHttpDate, signRequest, verifyRequest, VERIFY_CHECKS } from "../../src/hmac/index.js";
import { formatAuthorization, parseByCharacters } from "../../src/hmac/authorization-header.js";
import { mutate, type FuzzRequest } from "./request-mutations.js";
import { randomString, seededRandom } from "./seeded-random.js";

/**
 * Seeded, deterministic fuzzing of the parser and the verifier: damaged
 * requests never throw and are never accepted. The slowest case is printed
 * (a catastrophic regex shows there); tests assert no wall-clock times, so
 * two suites sharing a machine cannot fail it. Replay with FUZZ_SEED /
 * scale with FUZZ_CASES.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed2025);
const CASES = Number(process.env.FUZZ_CASES ?? 20_000);
const SECRET = "fuzz-secret-9f8e7d";
const DATE = "Tue, 07 Jan 2025 10:00:00 GMT";
const NOW = new Date("2025-01-07T10:00:42Z");

function baseRequests(): FuzzRequest[] {
  const specs = [
    { method: "GET", url: "/v2/crm/v1/items?b=2&a=1" },
    { method: "POST", url: "/v2/crm/v1/items?dry=1", body: '{"name":"caf\u00e9","n":[1,2,3]}' },
    { method: "DELETE", url: "/v2/crm/v1/items/42" },
  ];
  return specs.map((s) => {
    const body = Buffer.from(s.body ?? "", "utf8");
    const signed = signRequest({ clientId: "client-1", secret: SECRET, method: s.method, url: s.url, date: DATE, ...(s.body ? { body } : {}) });
    const headers = Object.fromEntries(Object.entries(signed.headers).map(([k, v]) => [k.toLowerCase(), v]));
    return { method: s.method, target: s.url, headers, body };
  });
}

/** The only accepted mutants: letter case changed in the scheme or parameter names, nothing else. */
function acceptableMutant(mutant: FuzzRequest, base: FuzzRequest): boolean {
  const auth = mutant.headers.authorization;
  const original = base.headers.authorization as string;
  const signature = /signature="([^"]*)"/.exec(original)![1]!;
  return (
    mutant.method === base.method && mutant.target === base.target && mutant.body.equals(base.body) &&
    mutant.headers.date === base.headers.date && mutant.headers.digest === base.headers.digest &&
    typeof auth === "string" && auth.toLowerCase() === original.toLowerCase() &&
    auth.includes(`"${signature}"`) && auth.includes('"client-1"')
  );
}

describe("fuzz", () => {
  it(`verifier: ${CASES} damaged requests never throw, never pass`, async () => {
    const random = seededRandom(SEED);
    const bases = baseRequests();
    for (const base of bases) {
      expect((await verifyRequest({ ...base, requestTarget: base.target, lookupSecret: () => SECRET, now: NOW })).ok).toBe(true);
    }
    let slowest = 0;
    let accepted = 0;
    let caseOnly = 0;
    const checks = new Map<string, number>();
    const started = performance.now();
    for (let i = 0; i < CASES; i++) {
      const base = random.pick(bases);
      const mutant = mutate(base, random);
      const t0 = performance.now();
      const result = await verifyRequest({
        method: mutant.method, requestTarget: mutant.target, headers: mutant.headers, body: mutant.body,
        lookupSecret: (id) => (id === "client-1" ? SECRET : undefined), now: NOW,
      });
      slowest = Math.max(slowest, performance.now() - t0);
      if (result.ok) {
        accepted++;
        if (JSON.stringify(mutant) !== JSON.stringify(base)) caseOnly++;
        if (!acceptableMutant(mutant, base)) throw new Error(`case ${i} (seed ${SEED}) accepted a damaged request: ${JSON.stringify(mutant).slice(0, 500)}`);
      } else {
        const leaks = [result.message, result.expectedSigningString ?? "", result.expectedDigest ?? ""].some((text) => text.includes(SECRET));
        if (!VERIFY_CHECKS.includes(result.check) || result.message.length === 0 || leaks) {
          throw new Error(`case ${i} (seed ${SEED}) gave a bad failure: ${JSON.stringify(result).slice(0, 500)}`);
        }
        checks.set(result.check, (checks.get(result.check) ?? 0) + 1);
      }
    }
    const total = performance.now() - started;
    console.log(`hmac fuzz: ${CASES} verifier cases, seed ${SEED}, ${total.toFixed(0)} ms total, slowest ${slowest.toFixed(1)} ms, ${CASES - (accepted - caseOnly)} damaged requests all refused except ${caseOnly} that only changed scheme/parameter-name case (accepted by design); ${accepted - caseOnly} mutations were no-ops, checks ${JSON.stringify(Object.fromEntries(checks))}`);
    expect(checks.size).toBeGreaterThanOrEqual(9);
  });

  it(`parser: ${CASES} random headers never throw; valid values round-trip`, () => {
    const random = seededRandom(SEED ^ 0xa5a5);
    const started = performance.now();
    for (let i = 0; i < CASES; i++) {
      const raw = random.chance(0.5) ? randomString(random, 400) : `hmac ${randomString(random, 60)}="${randomString(random, 60)}", ${randomString(random, 80)}`;
      const parsed = parseAuthorization(raw);
      if (parsed.ok) expect(raw.toLowerCase()).toContain("hmac ");
      // Whatever the header, an accepted one reads the same through the character loop (the one-regex path for the usual form takes nothing else).
      if (parsed.ok) expect(parseByCharacters(raw.replace(/^[ \t]+|[ \t]+$/g, ""))).toEqual(parsed);
      const username = randomString(random, 40).replace(/[^\x20-\x7e]|["\\]/g, "");
      const signature = randomString(random, 44).replace(/[^\x20-\x7e]|["\\]/g, "");
      const formatted = formatAuthorization(username, signature);
      expect(parseAuthorization(formatted)).toEqual({
        ok: true, params: { username, algorithm: "hmac-sha256", headers: "date request-line", signature },
      });
      // The one-regex path for the usual form and the character loop agree on it and on every one-character change of it.
      const at = random.int(formatted.length);
      const changed = formatted.slice(0, at) + String.fromCharCode(random.chance(0.8) ? 0x20 + random.int(0x5f) : random.int(0x200)) + formatted.slice(at + random.int(2));
      expect(parseByCharacters(formatted)).toEqual(parseAuthorization(formatted));
      const changedParsed = parseAuthorization(changed);
      if (changedParsed.ok) expect(parseByCharacters(changed.replace(/^[ \t]+|[ \t]+$/g, ""))).toEqual(changedParsed);
    }
    console.log(`hmac fuzz: ${CASES} parser cases (+${CASES} round-trips) in ${(performance.now() - started).toFixed(0)} ms`);
  });

  it(`dates: ${CASES} random and damaged dates never throw; accepted ones are canonical`, () => {
    const random = seededRandom(SEED ^ 0x5a5a);
    for (let i = 0; i < CASES; i++) {
      const good = formatHttpDate(new Date(random.int(4_102_444_800) * 1000));
      const at = random.int(good.length);
      const value = random.chance(0.2) ? randomString(random, 40) : good.slice(0, at) + String.fromCharCode(0x20 + random.int(0x5f)) + good.slice(at + 1);
      const parsed = parseHttpDate(value);
      if (parsed.ok && !value.includes(":60 ")) expect(formatHttpDate(parsed.date)).toBe(value);
    }
  });
});
