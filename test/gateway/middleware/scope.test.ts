import { describe, expect, it } from "vitest";
import type { CallerIdentity, ProductTarget } from "../../../src/gateway/http/middleware.js";
import { productAccess } from "../../../src/gateway/middleware/scope.js";
import { runMiddleware } from "./run-middleware.js";

const product = (name: string): ProductTarget => ({ name, upstream: new URL("http://127.0.0.1:1"), auth: ["bearer", "hmac"], timeoutMs: 1000, upstreamTarget: "/v1/x" });
const user = (scopes: string[]): CallerIdentity => ({ kind: "user", username: "u", clientId: "c", scopes });
const company = (p: string): CallerIdentity => ({ kind: "company", company: "acme", clientId: "h", product: p });

describe("productAccess", () => {
  it("lets a token through when its scope covers the product and method", async () => {
    expect((await runMiddleware(productAccess(), { method: "POST" }, { product: product("crm"), identity: user(["crm"]) })).passed).toBe(true);
    expect((await runMiddleware(productAccess(), { method: "GET" }, { product: product("crm"), identity: user(["crm:read"]) })).passed).toBe(true);
  });

  it("answers 403 insufficient_scope otherwise", async () => {
    for (const [method, scopes] of [["POST", ["crm:read"]], ["GET", ["billing"]]] as const) {
      const r = await runMiddleware(productAccess(), { method }, { product: product("crm"), identity: user([...scopes]) });
      expect(r.error?.status).toBe(403);
      expect(String(r.error?.headers["www-authenticate"])).toMatch(/error="insufficient_scope".*scope="crm"/);
    }
  });

  it("requires an HMAC credential's product to be the path's product", async () => {
    expect((await runMiddleware(productAccess(), {}, { product: product("crm"), identity: company("crm") })).passed).toBe(true);
    const r = await runMiddleware(productAccess(), {}, { product: product("crm"), identity: company("billing") });
    expect(r.error?.status).toBe(401);
    expect(r.error?.extra).toEqual({ check: "product" });
  });
});
