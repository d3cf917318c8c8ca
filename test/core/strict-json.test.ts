import { describe, expect, it } from "vitest";
import { MAX_DEPTH, parseStrictJson } from "../../src/core/strict-json.js";
import { seededRandom, type Random } from "../hmac/seeded-random.js";

/** JSON.parse's answer as plain data (no prototypes), for comparison. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

function reason(text: string): string {
  const parsed = parseStrictJson(text);
  if (parsed.ok) throw new Error(`accepted ${text}`);
  return parsed.reason;
}

describe("strict JSON (I-JSON) reader", () => {
  it("reads what JSON.parse reads, when the text has one meaning", () => {
    for (const text of ['{"a":"b","c":[1,-2.5e3,0,true,false,null,{}],"d":{"e":"\\u00e9\\n\\"\\\\\\/"}}', " [ ] ", '"x"', "0", "-0.5E+2", '{"😀":"\\ud83d\\ude00"}']) {
      const parsed = parseStrictJson(text);
      expect(parsed.ok, text).toBe(true);
      if (parsed.ok) expect(plain(parsed.value)).toEqual(JSON.parse(text));
    }
  });

  it.each([
    ["a plain duplicate", '{"client_id":"a","client_id":"b"}', /repeats the key "client_id"/],
    ["a duplicate spelled with an escape", '{"client_id":"a","client\\u005fid":"b"}', /repeats the key "client_id"/],
    ["a duplicate spelled with other escapes", '{"a/b":1,"a\\/b":2}', /repeats the key "a\/b"/],
    ["a duplicate in a nested object", '{"x":{"k":1,"y":[{"k":1,"k":2}]}}', /repeats the key "k" at character \d+ \(in \$\.x\.y\[0\]\)/],
    ["a duplicate differing only in value type", '{"scope":"crm","scope":null}', /repeats the key "scope"/],
    ["__proto__", '{"__proto__":{"admin":true}}', /__proto__/],
    ["__proto__ spelled with escapes, nested", '{"a":{"\\u005f_proto__":1}}', /__proto__/],
    ["a lone high surrogate", '{"a":"\\ud800"}', /lone surrogate/],
    ["a lone low surrogate in a key", '{"\\udc00":"a"}', /lone surrogate/],
    ["a reversed surrogate pair", '"\\ude00\\ud83d"', /lone surrogate/],
    ["a raw control character", '{"a":"b\u0001"}', /control character/],
    ["a byte order mark", '\ufeff{"a":"b"}', /where a value was expected/],
    ["trailing text", '{"a":"b"} {"a":"c"}', /text after/],
    ["a trailing comma", '{"a":"b",}', /no quoted key/],
    ["single quotes", "{'a':'b'}", /no quoted key/],
    ["a leading zero", "[01]", /no ',' or ']'/],
    ["a bare minus", "-", /malformed number/],
    ["an overflowing number", "1e400", /too large/],
    ["an unknown escape", '"\\x41"', /unknown escape/],
    ["a short \\u escape", '"\\u12"', /four hex digits/],
    ["an unterminated string", '{"a":"b', /never ends/],
    ["an empty text", "", /ends where a value was expected/],
    ["too deep", "[".repeat(MAX_DEPTH + 1) + "]".repeat(MAX_DEPTH + 1), /nests deeper/],
  ])("refuses %s", (_name, text, expected) => {
    expect(reason(text)).toMatch(expected);
  });

  it("accepts exactly MAX_DEPTH levels", () => {
    expect(parseStrictJson("[".repeat(MAX_DEPTH) + "]".repeat(MAX_DEPTH)).ok).toBe(true);
  });

  it("returns objects without a prototype", () => {
    const parsed = parseStrictJson('{"constructor":"x","toString":"y"}');
    expect(parsed.ok && Object.getPrototypeOf(parsed.value)).toBe(null);
  });

  it("never accepts what JSON.parse refuses, and agrees with it on everything else it accepts (seeded mutations)", () => {
    const random = seededRandom(0x15011);
    const pieces = ['"', "\\", "u", "0", "{", "}", "[", "]", ",", ":", " ", "-", ".", "e", "+", "\u0001", "\ud800", "\ufeff", "n", "t", "f", "1"];
    let accepted = 0;
    for (let i = 0; i < 20_000; i++) {
      let text = JSON.stringify(randomValue(random, 3));
      for (let m = random.int(3); m > 0; m--) {
        const at = random.int(text.length + 1);
        const cut = random.chance(0.5) ? 1 : 0;
        text = text.slice(0, at) + (random.chance(0.7) ? random.pick(pieces) : "") + text.slice(at + cut);
      }
      const strict = parseStrictJson(text);
      let loose: { ok: true; value: unknown } | { ok: false };
      try {
        loose = { ok: true, value: JSON.parse(text) };
      } catch {
        loose = { ok: false };
      }
      if (strict.ok) {
        accepted++;
        expect(loose.ok, text).toBe(true);
        if (loose.ok) expect(plain(strict.value), text).toEqual(plain(loose.value));
      }
    }
    expect(accepted).toBeGreaterThan(1_000);
  });
});

function randomValue(random: Random, depth: number): unknown {
  const kind = random.int(depth > 0 ? 7 : 5);
  if (kind === 0) return random.pick(["", "a", "é", "\n", '"', "\\", "\u2028", "😀", "client_id"]);
  if (kind === 1) return random.pick([0, -1, 1.5, 1e21, -2e-7]);
  if (kind === 2) return random.pick([true, false]);
  if (kind === 3) return null;
  if (kind === 4) return random.pick(["x", "y"]);
  if (kind === 5) return Array.from({ length: random.int(4) }, () => randomValue(random, depth - 1));
  return Object.fromEntries(Array.from({ length: random.int(4) }, (_, i) => [`k${i}`, randomValue(random, depth - 1)]));
}
