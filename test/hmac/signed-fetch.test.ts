import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RelcastError } from "../../src/core/errors.js";
import { createBodyDigest, createSignedFetch, verifyRequest, type VerifyResult } from "../../src/hmac/index.js";

/**
 * The fetch wrapper against a real HTTP server on 127.0.0.1 that verifies
 * with the raw `req.url`, the raw body streamed into a digest, and the
 * headers node:http parsed: what the gateway will do.
 */
const SECRET = "fetch-secret-42";
let server: Server;
let base: string;
const results: VerifyResult[] = [];

async function verifyIncoming(req: IncomingMessage): Promise<VerifyResult> {
  const digest = createBodyDigest();
  for await (const chunk of req) digest.update(chunk as Buffer);
  return verifyRequest({
    method: req.method ?? "", requestTarget: req.url ?? "", headers: req.headers, bodySha256: digest.finish(),
    lookupSecret: (id) => (id === "client-9" ? SECRET : undefined),
  });
}

beforeAll(async () => {
  server = createServer((req, res) => {
    verifyIncoming(req).then((result) => {
      results.push(result);
      res.writeHead(result.ok ? 200 : 401, { "content-type": "application/json" }).end(JSON.stringify(result));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("createSignedFetch", () => {
  const signedFetch = createSignedFetch({ clientId: "client-9", secret: SECRET });

  it.each([
    ["GET", "/v2/crm/v1/items?b=2&a=1", undefined],
    ["GET", "/v2/crm/v1/items", undefined],
    ["POST", "/v2/crm/v1/items?dry=1", '{"name":"caf\u00e9"}'],
    ["patch", "/v2/crm/v1/items/7?x=%2F&x=2", new TextEncoder().encode("bytes \u00fc")],
    ["PUT", "/v2/crm/v1/blob", new Blob(["blob body"])],
    ["DELETE", "/v2/crm/v1/items/7", undefined],
    ["GET", "/a/./b/../c?q=caf\u00e9 x&'quote'", undefined],
    ["GET", "/a?", undefined],
  ] as const)("%s %s is accepted by the verifier", async (method, path, body) => {
    const res = await signedFetch(`${base}${path}`, { method, ...(body === undefined ? {} : { body }), headers: { accept: "application/json" } });
    const result = (await res.json()) as VerifyResult;
    expect(result).toMatchObject({ ok: true, clientId: "client-9", deprecatedRequestLine: false });
    expect(res.status).toBe(200);
  });

  it("uses the injected clock, and a clock 300 s off is refused", async () => {
    const skewed = createSignedFetch({ clientId: "client-9", secret: SECRET, now: () => new Date(Date.now() - 301_000) });
    const result = (await (await skewed(`${base}/x`)).json()) as VerifyResult;
    expect(result).toMatchObject({ ok: false, check: "date-skew" });
  });

  it("refuses bodies whose bytes it cannot know in advance", async () => {
    await expect(signedFetch(`${base}/x`, { method: "POST", body: new URLSearchParams({ a: "1" }) })).rejects.toThrow(RelcastError);
    await expect(signedFetch(`${base}/x`, { method: "POST", body: new ReadableStream() as unknown as BodyInit, duplex: "half" } as RequestInit)).rejects.toThrow(/Digest/);
  });

  it("signs each non-safe request to one method and target in a second of its own (a gateway accepts a signature once); GETs share one", async () => {
    const dates: string[] = [];
    const recording = createSignedFetch({
      clientId: "client-9",
      secret: SECRET,
      now: () => new Date("2025-03-01T10:00:00.500Z"), // a clock that does not move
      fetch: async (input, init) => {
        dates.push(`${init?.method} ${new URL(String(input)).pathname} ${new Headers(init?.headers).get("date")}`);
        return new Response(null, { status: 204 });
      },
    });
    await recording(`${base}/orders`, { method: "POST", body: "{}" });
    await recording(`${base}/orders`, { method: "POST", body: '{"other":1}' });
    await Promise.all([recording(`${base}/orders`, { method: "DELETE" }), recording(`${base}/orders`, { method: "DELETE" })]);
    await recording(`${base}/other`, { method: "POST", body: "{}" });
    await recording(`${base}/orders`);
    await recording(`${base}/orders`);
    expect(dates).toEqual([
      "POST /orders Sat, 01 Mar 2025 10:00:00 GMT",
      "POST /orders Sat, 01 Mar 2025 10:00:01 GMT",
      "DELETE /orders Sat, 01 Mar 2025 10:00:00 GMT",
      "DELETE /orders Sat, 01 Mar 2025 10:00:01 GMT",
      "POST /other Sat, 01 Mar 2025 10:00:00 GMT",
      "GET /orders Sat, 01 Mar 2025 10:00:00 GMT",
      "GET /orders Sat, 01 Mar 2025 10:00:00 GMT",
    ]);
  });
});
