import { describe, expect, it } from "vitest";
import { productRoute } from "../../../src/gateway/middleware/product-route.js";
import { runMiddleware } from "./run-middleware.js";

const mw = productRoute({
  crm: { upstream: "http://127.0.0.1:9000/base/", auth: ["bearer", "hmac"], timeoutMs: 1000 },
});

describe("productRoute", () => {
  it("maps /v2/<product>/<version>/... to the upstream path, keeping the query", async () => {
    const r = await runMiddleware(mw, { url: "/v2/crm/v1/contacts/7?x=1&y=%2F" });
    expect(r.passed).toBe(true);
    expect(r.ctx.product?.name).toBe("crm");
    expect(r.ctx.product?.upstreamTarget).toBe("/v1/contacts/7?x=1&y=%2F");
  });

  it("answers 404 for unknown products, versions and gateway versions", async () => {
    for (const url of ["/v2/nope/v1/x", "/v2/crm/latest/x", "/v1/crm/v1/x", "/v2/crm"]) {
      expect((await runMiddleware(mw, { url })).error?.status).toBe(404);
    }
  });

  it("answers 400 for dot segments, encoded slashes and backslashes", async () => {
    for (const url of ["/v2/crm/v1/../x", "/v2/crm/v1/./x", "/v2/crm/v1/%2E%2E/x", "/v2/crm/v1/a%2fb", "/v2/crm/v1/a%5cb", "/v2/crm/v1/a\\b", "http://evil/v2/crm/v1/x"]) {
      expect((await runMiddleware(mw, { url })).error?.status).toBe(400);
    }
  });
});
