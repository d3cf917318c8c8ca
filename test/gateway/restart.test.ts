import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { startHarness, type Harness } from "./harness.js";
import { authorize, callApi, codeGrant, refreshGrant, tokenRequest, tokensFor, type Tokens } from "./oauth-driver.js";

const noHmac = () => ({ ok: false as const, check: "signature", message: "unused" });

describe("gateway state survives a restart (same SQLite file)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(noHmac);
  });
  afterAll(() => h.close());

  it("keeps access tokens, refresh tokens, pending and used codes", async () => {
    const tokens = await tokensFor(h);
    const spentCode = await authorize(h);
    const spent = (await (await tokenRequest(h, codeGrant(spentCode))).json()) as Tokens;
    const pendingCode = await authorize(h);
    const oldRefresh = tokens.refresh_token;
    const rotated = (await (await tokenRequest(h, refreshGrant(oldRefresh))).json()) as Tokens;

    await h.restart();

    expect((await callApi(h, "/v2/crm/v1/x", rotated.access_token)).status).toBe(200);
    expect((await tokenRequest(h, codeGrant(pendingCode))).status).toBe(200);
    // Reuse detection still works after the restart: the replay revokes the family.
    expect((await tokenRequest(h, refreshGrant(oldRefresh))).status).toBe(400);
    expect((await callApi(h, "/v2/crm/v1/x", rotated.access_token)).status).toBe(401);
    expect((await tokenRequest(h, codeGrant(spentCode))).status).toBe(400);
    expect((await callApi(h, "/v2/crm/v1/x", spent.access_token)).status).toBe(401);
  });

  it("stores only hashes of codes and tokens", async () => {
    const tokens = await tokensFor(h);
    await h.gateway.close();
    const db = new Database(h.dbFile, { readonly: true });
    const dump = JSON.stringify([
      db.prepare("SELECT * FROM access_tokens").all(),
      db.prepare("SELECT * FROM refresh_tokens").all(),
      db.prepare("SELECT * FROM auth_codes").all(),
    ]);
    db.close();
    expect(dump).not.toContain(tokens.access_token);
    expect(dump).not.toContain(tokens.refresh_token);
    expect(dump).not.toMatch(/rc[acr]_/);
    await h.restart().catch(() => undefined);
  });
});
