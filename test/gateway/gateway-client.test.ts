import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  TokenEndpointError,
  TokenHolder,
  buildAuthorizationUrl,
  exchangeCode,
  filePersistence,
  memoryPersistence,
  readRedirect,
  type ClientCredentials,
} from "../../src/gateway-client/index.js";
import { CLIENT, USER, startHarness, type Harness } from "./harness.js";
import { readForm, submitForm } from "./oauth-driver.js";

const noHmac = () => ({ ok: false as const, check: "signature", message: "unused" });

describe("gateway client library against a running gateway", () => {
  let h: Harness;
  let client: ClientCredentials;
  beforeAll(async () => {
    h = await startHarness(noHmac);
    client = { authUrl: h.gateway.url, clientId: CLIENT.id, clientSecret: CLIENT.secret, scope: ["crm"], now: () => h.clock() };
  });
  afterAll(() => h.close());

  async function codeVia(url: string, state: string): Promise<string> {
    const form = await readForm(await fetch(url, { redirect: "manual" }));
    const res = await submitForm(h, form, { username: USER.name, password: USER.password, decision: "approve" });
    const result = readRedirect(res.headers.get("location")!, state);
    if (!("code" in result)) throw new Error(result.error);
    return result.code;
  }

  it("builds the authorization URL, exchanges the code and refreshes single-flight", async () => {
    const url = buildAuthorizationUrl({ authUrl: h.gateway.url + "/", clientId: CLIENT.id, scope: ["crm"], state: "abc" });
    expect(url).toBe(`${h.gateway.url}/auth?client_id=app-one&response_type=code&scope=crm&state=abc`);
    const tokens = await exchangeCode(client, await codeVia(url, "abc"));
    expect(tokens.expiresAt).toBe(h.clock().getTime() + 3600_000);

    const persistence = memoryPersistence();
    let saves = 0;
    const counting = { load: persistence.load, save: async (t: typeof tokens) => { saves++; await persistence.save(t); } };
    const holder = new TokenHolder({ client, persistence: counting, now: () => h.clock() });
    await holder.setTokens(tokens);
    expect(await holder.getAccessToken()).toBe(tokens.accessToken);

    h.clock.advance(3590); // inside the 60 s refresh margin
    const many = await Promise.all(Array.from({ length: 8 }, () => holder.getAccessToken()));
    expect(new Set(many).size).toBe(1);
    expect(many[0]).not.toBe(tokens.accessToken);
    expect(saves).toBe(2); // setTokens + exactly one refresh
    const res = await fetch(`${h.gateway.url}/v2/crm/v1/me`, { headers: { authorization: `Bearer ${many[0]}` } });
    expect(res.status).toBe(200);
    // The family is intact, so no second refresh was ever spent.
    expect((await holder.refresh()).accessToken).not.toBe(many[0]);
  });

  it("persists rotated tokens to a private file and resumes from it", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-client-"));
    const file = path.join(dir, "tokens.json");
    try {
      const url = buildAuthorizationUrl({ authUrl: h.gateway.url, clientId: CLIENT.id, scope: "crm", state: "s" });
      const first = new TokenHolder({ client, persistence: filePersistence(file), now: () => h.clock() });
      await first.setTokens(await exchangeCode(client, await codeVia(url, "s")));
      h.clock.advance(3600);
      const access = await first.getAccessToken();
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const second = new TokenHolder({ client, persistence: filePersistence(file), now: () => h.clock() });
      expect(await second.getAccessToken()).toBe(access);
      expect(JSON.parse(await readFile(file, "utf8")).accessToken).toBe(access);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("surfaces token endpoint errors with their RFC 6749 code", async () => {
    const err = await exchangeCode(client, "rcc_bogus").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TokenEndpointError);
    expect((err as TokenEndpointError).error).toBe("invalid_grant");
    expect(readRedirect("https://app/cb?state=x&code=c", "y")).toEqual({ error: "state_mismatch" });
  });
});
