import { describe, expect, it } from "vitest";
import { bearerAuth } from "../../../src/gateway/middleware/bearer-auth.js";
import type { AccessCheck } from "../../../src/gateway/oauth/introspect.js";
import { runMiddleware } from "./run-middleware.js";

const tokens: Record<string, AccessCheck> = {
  good: { ok: true, identity: { username: "alice", clientId: "app", scopes: ["crm"] } },
  old: { ok: false, reason: "expired" },
  gone: { ok: false, reason: "revoked" },
};
const mw = bearerAuth({ verifyToken: (t) => tokens[t] ?? { ok: false, reason: "unknown" } });

describe("bearerAuth", () => {
  it("sets the user identity for a valid token (scheme is case-insensitive)", async () => {
    const r = await runMiddleware(mw, { headers: { authorization: "bearer good" } });
    expect(r.passed).toBe(true);
    expect(r.ctx.identity).toEqual({ kind: "user", username: "alice", clientId: "app", scopes: ["crm"] });
  });

  it.each([
    ["old", "the access token expired"],
    ["gone", "the access token was revoked"],
    ["nope", "the access token is invalid"],
  ])("answers 401 invalid_token for %s", async (token, description) => {
    const r = await runMiddleware(mw, { headers: { authorization: `Bearer ${token}` } });
    expect(r.error?.status).toBe(401);
    expect(r.error?.error).toBe("invalid_token");
    expect(r.error?.headers["www-authenticate"]).toBe(`Bearer realm="relcast", error="invalid_token", error_description="${description}"`);
  });

  it("answers 400 invalid_request for a malformed header", async () => {
    for (const authorization of ["Bearer", "Bearer a b", "Bearer tok\u00e9n"]) {
      const r = await runMiddleware(mw, { headers: { authorization } });
      expect(r.error?.status).toBe(400);
    }
  });
});
