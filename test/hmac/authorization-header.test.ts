import { describe, expect, it } from "vitest";
import { clientIdProblem, formatAuthorization, parseAuthorization } from "../../src/hmac/authorization-header.js";

const SIG = "4D64mbZ72fhq4FjVqtJ6/FG7+o+X8rg8eKjhDQqvNh8=";
const GOOD = `hmac username="client-1", algorithm="hmac-sha256", headers="date request-line", signature="${SIG}"`;

function message(raw: string): string {
  const parsed = parseAuthorization(raw);
  if (parsed.ok) throw new Error(`expected ${raw} to be refused`);
  return parsed.message;
}

describe("Authorization grammar (spec §5.2)", () => {
  it("formats the exact shape of the spec", () => {
    expect(formatAuthorization("client-1", SIG)).toBe(GOOD);
  });

  it("parses the shape and returns values untouched", () => {
    expect(parseAuthorization(GOOD)).toEqual({
      ok: true,
      params: { username: "client-1", algorithm: "hmac-sha256", headers: "date request-line", signature: SIG },
    });
  });

  it("matches the scheme and parameter names case-insensitively and trims surrounding whitespace", () => {
    const parsed = parseAuthorization(` HMAC Username="client-1", ALGORITHM="hmac-sha256", Headers="date request-line", signature="${SIG}"\t`);
    expect(parsed.ok && parsed.params.username).toBe("client-1");
  });

  it("keeps values exactly, including spaces and symbols allowed in a plain-string", () => {
    const parsed = parseAuthorization(`hmac username="a b!#$%&'()*+,-./:;<=>?@[]^_\`{|}~", algorithm="x", headers="y", signature="z"`);
    expect(parsed.ok && parsed.params.username).toBe("a b!#$%&'()*+,-./:;<=>?@[]^_`{|}~");
    expect(parseAuthorization(`hmac username="", algorithm="", headers="", signature=""`).ok).toBe(true);
  });

  it.each([
    ["empty", "", /empty/],
    ["another scheme", `Signature keyId="a", algorithm="hmac-sha256"`, /scheme must be "hmac"/],
    ["Bearer", "Bearer abc", /scheme must be "hmac"/],
    ["bare scheme", "hmac", /followed by one space/],
    ["two spaces after scheme", GOOD.replace("hmac ", "hmac  "), /parameter name at column 6, but found a space/],
    ["no space after comma", GOOD.replace(", algorithm", ",algorithm"), /comma and exactly one space/],
    ["two spaces after comma", GOOD.replace(", algorithm", ",  algorithm"), /comma and exactly one space/],
    ["tab after comma", GOOD.replace(", algorithm", ",\talgorithm"), /comma and exactly one space/],
    ["semicolon separator", GOOD.replace(", algorithm", "; algorithm"), /comma and exactly one space/],
    ["trailing comma", `${GOOD},`, /comma and exactly one space/],
    ["space before =", GOOD.replace('username="', 'username ="'), /followed by "="/],
    ["unquoted value", GOOD.replace('algorithm="hmac-sha256"', "algorithm=hmac-sha256"), /double quotes/],
    ["single quotes", GOOD.replace('username="client-1"', "username='client-1'"), /double quotes/],
    ["unclosed quote", `hmac username="client-1`, /no closing double quote/],
    ["backslash escape", GOOD.replace("client-1", 'cli\\"ent'), /backslash/],
    ["non-ASCII", GOOD.replace("client-1", "clïent"), /non-ASCII character U\+00EF/],
    ["control character", GOOD.replace("client-1", "cli\u0001ent"), /control character U\+0001/],
    ["duplicate parameter", `${GOOD}, signature="${SIG}"`, /"signature" appears more than once/],
    ["duplicate with other case", GOOD.replace("algorithm=", "USERNAME="), /"username" appears more than once/],
    ["unknown parameter", GOOD.replace("algorithm=", "algo="), /unknown parameter "algo"/],
    ["Kong x-date style extra", `${GOOD}, nonce="1"`, /unknown parameter "nonce"/],
    ["missing signature", `hmac username="a", algorithm="hmac-sha256", headers="date request-line"`, /missing parameter signature/],
    ["only username", `hmac username="a"`, /missing parameters algorithm, headers, signature/],
    ["reordered", `hmac algorithm="hmac-sha256", username="a", headers="date request-line", signature="${SIG}"`, /order username, algorithm, headers, signature/],
    ["huge", `hmac username="${"a".repeat(5000)}", algorithm="x", headers="y", signature="z"`, /limit is 4096/],
  ])("refuses %s", (_name, raw, expected) => {
    expect(message(raw)).toMatch(expected);
  });

  it("names client ids that cannot be sent", () => {
    expect(clientIdProblem("client-1")).toBeUndefined();
    expect(clientIdProblem("")).toMatch(/empty/);
    expect(clientIdProblem('a"b')).toMatch(/double quote/);
    expect(clientIdProblem("é")).toMatch(/non-ASCII/);
  });
});
