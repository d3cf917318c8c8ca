import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kitVerifier } from "../../src/gateway/hmac-kit.js";
import { signRequest } from "../../src/hmac/index.js";
import { HMAC_CRED, startHarness, type Harness } from "./harness.js";

/**
 * The upstream's answer reaches the caller with its end-to-end headers as
 * the upstream wrote them (repeated ones as repeated lines) and without its
 * hop-by-hop headers, including those its own Connection header names
 * (RFC 9110 §7.6.1).
 */
describe("proxied response headers", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(kitVerifier);
  });
  afterAll(() => h.close());

  it("drops hop-by-hop headers and those any Connection line names, keeps the rest and repeated lines", async () => {
    h.upstream.onRequest = (req, res) => {
      req.resume();
      res.writeHead(200, [
        "Content-Type", "text/plain",
        "Connection", "keep-alive, X-Private-Hop",
        "X-Private-Hop", "only for the gateway",
        "Connection", "X-Second-Hop",
        "X-Second-Hop", "named by a second Connection line",
        "Keep-Alive", "timeout=5",
        "Set-Cookie", "a=1",
        "Set-Cookie", "b=2",
        "X-Custom", "kept",
        "Content-Length", "2",
      ]);
      res.end("ok");
      return true;
    };
    const target = "/v2/crm/v1/headers";
    const { headers } = signRequest({ clientId: HMAC_CRED.id, secret: HMAC_CRED.secret, method: "GET", url: target, date: h.clock() });
    const url = new URL(h.gateway.url);
    const raw = await new Promise<string[]>((resolve, reject) => {
      const req = http.request({ host: url.hostname, port: url.port, path: target, headers, agent: false }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.rawHeaders));
      });
      req.on("error", reject);
      req.end();
    });
    h.upstream.onRequest = undefined;
    const lines = [];
    for (let i = 0; i < raw.length; i += 2) lines.push(`${raw[i]!.toLowerCase()}: ${raw[i + 1]}`);
    expect(lines).toEqual(expect.arrayContaining(["content-type: text/plain", "set-cookie: a=1", "set-cookie: b=2", "x-custom: kept", "content-length: 2"]));
    expect(lines.filter((l) => l.startsWith("x-private-hop") || l.startsWith("x-second-hop") || l === "keep-alive: timeout=5")).toEqual([]);
  });
});
