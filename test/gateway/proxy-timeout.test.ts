import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kitVerifier } from "../../src/gateway/hmac-kit.js";
import { signRequest } from "../../src/hmac/index.js";
import { HMAC_CRED, HMAC_OTHER, rawRequest, startHarness, type Harness } from "./harness.js";
import { tokensFor } from "./oauth-driver.js";

/**
 * A product's `timeoutMs` is how long its upstream connection may carry no
 * byte either way (src/gateway/upstream-deadlines.ts). On the HMAC fast
 * path and on hono's chain alike: no answer is a 504 and the upstream
 * request is closed; a stall in the middle of a body cuts the caller's
 * connection; a slow answer that keeps moving is delivered whole; a caller
 * that goes away closes the upstream request.
 */
describe("upstream timeout", { timeout: 15_000 }, () => {
  let h: Harness;
  /** Resolves when the upstream sees the gateway close the request it is holding. */
  let upstreamClosed: Promise<void>;

  beforeAll(async () => {
    h = await startHarness(kitVerifier, (c) => {
      c.products!.crm = { ...c.products!.crm!, timeoutMs: 200 };
      c.products!.billing = { ...c.products!.billing!, timeoutMs: 1000 };
    });
  });
  afterAll(() => h.close());

  /** The upstream takes the next request, calls `answer` with it, and reports when the gateway closes it. */
  const upstreamDoes = (answer: (res: http.ServerResponse) => void) => {
    upstreamClosed = new Promise((resolve) => {
      h.upstream.onRequest = (req, res) => {
        res.on("close", () => resolve());
        req.resume();
        answer(res);
        return true;
      };
    });
  };
  /** Signed with the credential of the product the target names (crm or billing). */
  const hmacHeaders = (target: string) => {
    const credential = target.startsWith("/v2/billing/") ? HMAC_OTHER : HMAC_CRED;
    return signRequest({ clientId: credential.id, secret: credential.secret, method: "GET", url: target, date: h.clock() }).headers;
  };

  it("answers 504 on the HMAC fast path when the upstream never answers, and closes the upstream request", async () => {
    upstreamDoes(() => {});
    const res = await rawRequest(h.gateway.url, "/v2/crm/v1/slow", hmacHeaders("/v2/crm/v1/slow"));
    expect(res.status).toBe(504);
    expect(JSON.parse(res.body)).toEqual({ error: "upstream_timeout", error_description: "crm did not answer within 200 ms" });
    await upstreamClosed;
  });

  it("answers 504 on hono's chain (Bearer) too", async () => {
    const { access_token } = await tokensFor(h);
    upstreamDoes(() => {});
    const res = await fetch(`${h.gateway.url}/v2/crm/v1/slow`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ error: "upstream_timeout" });
    await upstreamClosed;
  });

  it("cuts the caller's connection when the upstream stalls in the middle of its body", async () => {
    upstreamDoes((res) => {
      res.writeHead(200, { "content-type": "text/plain", "content-length": "100" });
      res.write("first part ");
    });
    const url = new URL(h.gateway.url);
    const outcome = await new Promise<{ status: number; body: string; complete: boolean }>((resolve, reject) => {
      const req = http.request({ host: url.hostname, port: url.port, path: "/v2/crm/v1/stall", headers: hmacHeaders("/v2/crm/v1/stall") }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("error", () => {}); // the cut: `aborted` and `close` tell
        res.on("close", () => resolve({ status: res.statusCode ?? 0, body, complete: res.complete }));
      });
      req.on("error", reject);
      req.end();
    });
    expect(outcome).toEqual({ status: 200, body: "first part ", complete: false });
    await upstreamClosed;
  });

  it("delivers a slow answer whole while it keeps moving, past the timeout in all", async () => {
    const parts = 8;
    upstreamDoes((res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      let sent = 0;
      // A part every 200 ms on a product with timeoutMs 1000: 1.6 s in all, never 1 s idle.
      const timer = setInterval(() => {
        sent++;
        if (sent < parts) res.write(`part ${sent}\n`);
        else {
          clearInterval(timer);
          res.end(`part ${sent}\n`);
        }
      }, 200);
    });
    const res = await rawRequest(h.gateway.url, "/v2/billing/v1/report", hmacHeaders("/v2/billing/v1/report"));
    expect(res.status).toBe(200);
    expect(res.body).toBe(Array.from({ length: parts }, (_, i) => `part ${i + 1}\n`).join(""));
  });

  it("closes the upstream request when the caller goes away first", async () => {
    let upstreamGotIt: () => void = () => {};
    const arrived = new Promise<void>((resolve) => (upstreamGotIt = resolve));
    upstreamDoes(() => upstreamGotIt());
    const url = new URL(h.gateway.url);
    const req = http.request({ host: url.hostname, port: url.port, path: "/v2/billing/v1/wait", headers: hmacHeaders("/v2/billing/v1/wait") });
    req.on("error", () => {}); // the destroy below
    req.end();
    await arrived;
    req.destroy();
    await upstreamClosed;
  });
});
