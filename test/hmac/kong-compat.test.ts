import { describe, expect, it } from "vitest";
import { formatHttpDate, parseAuthorization, signRequest, verifyRequest } from "../../src/hmac/index.js";
import { DATE } from "./fixed-vectors.js";

/**
 * Where spec §5.2 agrees with Kong's hmac-auth plugin, relcast must produce
 * what Kong checks. The Kong side is re-stated here from its documented
 * behaviour (no Kong code): the signing string is, for each name in
 * `headers`, `<name>: <value>` (request-line: `<METHOD> <path?query>
 * HTTP/<version>`), joined by "\n"; Digest is `SHA-256=` + Base64.
 * docs/hmac.md lists where relcast follows the spec instead.
 */
function kongSigningString(names: string[], headers: Record<string, string>, method: string, pathWithQuery: string, httpVersion: string): string {
  return names.map((name) => (name === "request-line" ? `${method} ${pathWithQuery} HTTP/${httpVersion}` : `${name}: ${headers[name]}`)).join("\n");
}

describe("compatibility with Kong hmac-auth where the spec agrees", () => {
  it("builds Kong's signing string for headers=\"date request-line\" over HTTP/1.1", () => {
    const signed = signRequest({ clientId: "c", secret: "secret", method: "GET", url: "/v2/a/v1/b?y=2&x=1", date: DATE });
    expect(signed.signingString).toBe(kongSigningString(["date", "request-line"], { date: DATE }, "GET", "/v2/a/v1/b?y=2&x=1", "1.1"));
  });

  it("emits a header Kong's parser reads into the same four values", () => {
    const auth = signRequest({ clientId: "client-1", secret: "secret", method: "GET", url: "/", date: DATE }).headers.Authorization;
    const kongStyle = /\s*[Hh]mac\s*username="(.+)",\s*algorithm="(.+)",\s*headers="(.+)",\s*signature="(.+)"/.exec(auth);
    const ours = parseAuthorization(auth);
    expect(ours.ok && [ours.params.username, ours.params.algorithm, ours.params.headers, ours.params.signature]).toEqual(kongStyle?.slice(1));
  });

  it("formats the Digest the way Kong compares it", () => {
    expect(signRequest({ clientId: "c", secret: "secret", method: "POST", url: "/", body: "" }).headers.Digest).toBe("SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
  });

  it("differs from Kong on purpose: a skew of exactly the limit is refused (Kong accepts skew == clock_skew)", async () => {
    const signed = signRequest({ clientId: "c", secret: "secret", method: "GET", url: "/", date: DATE });
    const now = new Date(new Date(DATE).getTime() + 300_000);
    const result = await verifyRequest({ method: "GET", requestTarget: "/", headers: { date: DATE, authorization: signed.headers.Authorization }, lookupSecret: () => "secret", now });
    expect(result).toMatchObject({ ok: false, check: "date-skew" });
  });

  it("differs from Kong on purpose: the request-line says HTTP/1.1 even for other transport versions", () => {
    const signed = signRequest({ clientId: "c", secret: "secret", method: "GET", url: "/", date: formatHttpDate(new Date(0)) });
    expect(signed.signingString.endsWith(" HTTP/1.1")).toBe(true);
    expect(signed.signingString).not.toBe(kongSigningString(["date", "request-line"], { date: formatHttpDate(new Date(0)) }, "GET", "/", "2.0"));
  });
});
