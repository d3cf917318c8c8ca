import { describe, expect, it } from "vitest";
import { createBodyDigest, verifyRequest, type VerifyRequestInput } from "../../src/hmac/index.js";
import { authorizationFor, DATE, DEPRECATED_V1_SIGNATURE, HTTP10_V1_SIGNATURE, RESERIALISED_DIGEST, VECTORS, type Vector } from "./fixed-vectors.js";

const [GET_V, POST_V] = VECTORS as [Vector, Vector];
const SECRETS: Record<string, string> = Object.fromEntries(VECTORS.map((v) => [v.clientId, v.secret]));

function request(v: Vector, override: Partial<VerifyRequestInput> = {}, headers: Record<string, string | undefined> = {}): VerifyRequestInput {
  const base: Record<string, string> = { authorization: authorizationFor(v.clientId, v.signature), date: v.date };
  if (v.digest) base.digest = v.digest;
  const merged = Object.fromEntries(Object.entries({ ...base, ...headers }).filter(([, value]) => value !== undefined)) as Record<string, string>;
  return {
    method: v.method, requestTarget: v.target, headers: merged,
    ...(v.body === undefined ? {} : { body: Buffer.from(v.body, "utf8") }),
    lookupSecret: (id) => SECRETS[id], now: new Date(v.date), ...override,
  };
}

const at = (offsetSeconds: number) => new Date(new Date(DATE).getTime() + offsetSeconds * 1000);

describe("verifyRequest", () => {
  it.each(VECTORS.map((v) => [v.name, v] as const))("accepts the fixed vector: %s", async (_name, v) => {
    expect(await verifyRequest(request(v))).toEqual({ ok: true, clientId: v.clientId, deprecatedRequestLine: false, signingString: `date: ${v.date}\n${v.method} ${v.target} HTTP/1.1`, signature: v.signature });
  });

  describe("skew boundary: less than 300 s, both directions", () => {
    it.each([0, 1, 299, -299, 299.999, -299.999])("accepts %s s", async (offset) => {
      expect((await verifyRequest(request(GET_V, { now: at(offset) }))).ok).toBe(true);
    });
    it.each([300, -300, 300.001, 3600, -86400])("rejects %s s as date-skew", async (offset) => {
      const result = await verifyRequest(request(GET_V, { now: at(offset) }));
      expect(result).toMatchObject({ ok: false, check: "date-skew", expectedSigningString: `date: ${DATE}\nGET ${GET_V.target} HTTP/1.1` });
      if (!result.ok) expect(result.message).toMatch(offset > 0 ? /behind/ : /ahead of/);
    });
    it("honours a custom window", async () => {
      expect((await verifyRequest(request(GET_V, { now: at(59), maxSkewSeconds: 60 }))).ok).toBe(true);
      expect(await verifyRequest(request(GET_V, { now: at(60), maxSkewSeconds: 60 }))).toMatchObject({ check: "date-skew" });
    });
  });

  it.each([
    ["no Authorization", { authorization: undefined }, "authorization-grammar", /no Authorization header/],
    ["Bearer token", { authorization: "Bearer abc" }, "authorization-grammar", /scheme must be "hmac"/],
    ["hmac-sha1", { authorization: authorizationFor("client-1", GET_V.signature).replace("hmac-sha256", "hmac-sha1") }, "algorithm", /no other algorithm/],
    ["HMAC-SHA256", { authorization: authorizationFor("client-1", GET_V.signature).replace("hmac-sha256", "HMAC-SHA256") }, "algorithm", /lower case/],
    ["x-date headers", { authorization: authorizationFor("client-1", GET_V.signature).replace("date request-line", "x-date request-line") }, "headers", /x-date is not used/],
    ["reversed headers", { authorization: authorizationFor("client-1", GET_V.signature).replace("date request-line", "request-line date") }, "headers", /date first/],
    ["date only", { authorization: authorizationFor("client-1", GET_V.signature).replace("date request-line", "date") }, "headers", /request-line must be signed/],
    ["no Date", { date: undefined }, "date-missing", /no Date header/],
    ["X-Date instead of Date", { date: undefined, "x-date": DATE }, "date-missing", /X-Date is not a substitute/],
    ["RFC 850 Date", { date: "Tuesday, 07-Jan-25 10:00:00 GMT" }, "date-format", /IMF-fixdate/],
    ["wrong weekday", { date: "Wed, 07 Jan 2025 10:00:00 GMT" }, "date-format", /is a Tue/],
    ["unknown client", { authorization: authorizationFor("nobody", GET_V.signature) }, "unknown-client", /"nobody"/],
    ["empty username", { authorization: authorizationFor("", GET_V.signature) }, "unknown-client", /""/],
    ["signature from another request", { authorization: authorizationFor("client-1", POST_V.signature) }, "signature", /does not match/],
    ["hex signature", { authorization: authorizationFor("client-1", "ab".repeat(32)) }, "signature", /hex/],
    ["base64url signature", { authorization: authorizationFor("client-1", GET_V.signature.replace(/\//g, "_").replace(/\+/g, "-")) }, "signature", /base64url/],
    ["unpadded signature", { authorization: authorizationFor("client-1", GET_V.signature.slice(0, 43)) }, "signature", /padding/],
    ["HTTP/1.0 request-line", { authorization: authorizationFor("client-1", HTTP10_V1_SIGNATURE) }, "signature", /HTTP\/1\.0/],
  ])("names the failing check: %s", async (_name, headers, check, message) => {
    const result = await verifyRequest(request(GET_V, {}, headers));
    expect(result).toMatchObject({ ok: false, check });
    if (!result.ok) expect(result.message).toMatch(message);
  });

  it("refuses a Date that is not the signed one even within the window", async () => {
    const result = await verifyRequest(request(GET_V, { now: at(1) }, { date: "Tue, 07 Jan 2025 10:00:01 GMT" }));
    expect(result).toMatchObject({ ok: false, check: "signature", expectedSigningString: `date: Tue, 07 Jan 2025 10:00:01 GMT\nGET ${GET_V.target} HTTP/1.1` });
  });

  it("refuses headers sent twice", async () => {
    const twice = (name: string, value: string) => ({ ...request(POST_V), headers: { ...request(POST_V).headers, [name]: [value, value] } });
    expect(await verifyRequest(twice("authorization", authorizationFor("client-1", POST_V.signature)))).toMatchObject({ check: "authorization-grammar" });
    expect(await verifyRequest(twice("date", DATE))).toMatchObject({ check: "date-missing" });
    expect(await verifyRequest(twice("digest", POST_V.digest!))).toMatchObject({ check: "digest-mismatch" });
  });

  describe("query string", () => {
    it("refuses a re-ordered or re-encoded query", async () => {
      for (const target of ["/v2/crm/v1/items?a=1&b=2", "/v2/crm/v1/items?b=2&a=1&", "/v2/crm/v1/items?b=%32&a=1", "/v2/crm/v1/items"]) {
        expect(await verifyRequest(request(GET_V, { requestTarget: target }))).toMatchObject({ ok: false, check: "signature" });
      }
    });
    it("recognises the deprecated request-line without the query and refuses it by default", async () => {
      const result = await verifyRequest(request(GET_V, {}, { authorization: authorizationFor("client-1", DEPRECATED_V1_SIGNATURE) }));
      expect(result).toMatchObject({ ok: false, check: "deprecated-request-line", expectedSigningString: `date: ${DATE}\nGET ${GET_V.target} HTTP/1.1` });
    });
    it("accepts it when allowed and says so", async () => {
      const result = await verifyRequest(request(GET_V, { allowDeprecatedRequestLine: true }, { authorization: authorizationFor("client-1", DEPRECATED_V1_SIGNATURE) }));
      expect(result).toEqual({ ok: true, clientId: "client-1", deprecatedRequestLine: true, signingString: `date: ${DATE}\nGET /v2/crm/v1/items HTTP/1.1`, signature: DEPRECATED_V1_SIGNATURE });
    });
    it("does not call a query-less request deprecated", async () => {
      const result = await verifyRequest(request(GET_V, { requestTarget: "/v2/crm/v1/items", allowDeprecatedRequestLine: true }, { authorization: authorizationFor("client-1", DEPRECATED_V1_SIGNATURE) }));
      expect(result).toMatchObject({ ok: true, deprecatedRequestLine: false });
    });
  });

  describe("digest", () => {
    it("requires a Digest on POST, PUT, PATCH and DELETE and says what to send", async () => {
      const result = await verifyRequest(request(POST_V, {}, { digest: undefined }));
      expect(result).toMatchObject({ ok: false, check: "digest-missing", expectedDigest: POST_V.digest, clientId: "client-1" });
    });
    it("refuses the digest of a re-serialised body", async () => {
      const result = await verifyRequest(request(POST_V, {}, { digest: RESERIALISED_DIGEST }));
      expect(result).toMatchObject({ ok: false, check: "digest-mismatch", expectedDigest: POST_V.digest });
      if (!result.ok) expect(result.message).toMatch(/raw bytes/);
    });
    it("refuses a body changed after signing", async () => {
      expect(await verifyRequest(request(POST_V, { body: Buffer.from('{"a":2}') }))).toMatchObject({ check: "digest-mismatch" });
      expect(await verifyRequest(request(POST_V, { body: undefined }))).toMatchObject({ check: "digest-mismatch" });
    });
    it.each([
      ["lower-case algorithm", POST_V.digest!.replace("SHA-256", "sha-256"), /must start with "SHA-256="/],
      ["SHA-512", "SHA-512=abc", /must start with "SHA-256="/],
      ["two digests", `${POST_V.digest}, MD5=abc`, /not Base64 of a 32-byte/],
      ["hex", `SHA-256=${"ab".repeat(32)}`, /it is hex/],
    ])("refuses a malformed Digest: %s", async (_name, digest, message) => {
      const result = await verifyRequest(request(POST_V, {}, { digest }));
      expect(result).toMatchObject({ check: "digest-mismatch" });
      if (!result.ok) expect(result.message).toMatch(message);
    });
    it("checks a Digest sent on GET and requires one only when a GET has a body", async () => {
      expect((await verifyRequest(request(GET_V))).ok).toBe(true);
      expect((await verifyRequest(request(GET_V, { body: Buffer.alloc(0) }))).ok).toBe(true);
      expect(await verifyRequest(request(GET_V, { body: Buffer.from("x") }))).toMatchObject({ check: "digest-missing", expectedDigest: "SHA-256=LXEWQrcmsEQBYnyp+6wy9chTD7GQPMTbAiWHF5IaSIE=" });
      expect(await verifyRequest(request(GET_V, {}, { digest: RESERIALISED_DIGEST }))).toMatchObject({ check: "digest-mismatch" });
    });
    it("accepts a SHA-256 computed while streaming", async () => {
      const stream = createBodyDigest();
      for (const chunk of ['{"a"', ":", "1}"]) stream.update(chunk);
      const { body: _body, ...rest } = request(POST_V);
      expect((await verifyRequest({ ...rest, bodySha256: stream.finish() })).ok).toBe(true);
    });
  });

  it("awaits an asynchronous secret lookup and lets its errors through", async () => {
    expect((await verifyRequest(request(GET_V, { lookupSecret: async (id) => SECRETS[id] }))).ok).toBe(true);
    await expect(verifyRequest(request(GET_V, { lookupSecret: () => Promise.reject(new Error("db down")) }))).rejects.toThrow("db down");
  });

  it("finds headers given with other letter case", async () => {
    const { headers, ...rest } = request(GET_V);
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect((await verifyRequest({ ...rest, headers: upper })).ok).toBe(true);
  });
});
