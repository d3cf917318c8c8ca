import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/gateway/clock.js";
import { MIGRATIONS } from "../../src/gateway/state/migrations.js";
import { openTokenStore } from "../../src/gateway/state/open-store.js";
import { signRequest } from "../../src/hmac/index.js";
import { registerSecret } from "../helpers/secrets.js";
import { postgresUnavailableReason, startPostgresServer, type PostgresServer } from "../helpers/postgres-server.js";
import { CLIENT, HMAC_CRED, USER, startHarness, startUpstream, testConfig, type Harness, type Upstream } from "./harness.js";
import { authorize, callApi, codeGrant, openConsent, readForm, refreshGrant, submitForm, tokenRequest, tokensFor, type Tokens } from "./oauth-driver.js";

/**
 * Issue 25 item 4: the gateway's state in a real PostgreSQL server (started
 * once for this file), with every single-use guarantee holding when two
 * gateway processes share the database.
 */
const unavailable = postgresUnavailableReason();
const noHmac = () => ({ ok: false as const, check: "signature", message: "unused" });
const repo = path.resolve(import.meta.dirname, "../..");
const cli = path.join(repo, "dist/cli/relcast.mjs");

function startCli(args: string[]): Promise<{ child: ChildProcess; url: string; log: string }> {
  const child = spawn(process.execPath, [cli, "gateway", ...args], { stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      err += chunk;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
      if (m) resolve({ child, url: m[1]!, log: err });
    });
    child.on("exit", (code) => reject(new Error(`gateway exited ${code}: ${err}`)));
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners("exit");
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.on("exit", (code) => resolve(code));
    child.kill("SIGTERM");
  });
}

function post(base: string, route: string, body: Record<string, string>): Promise<Response> {
  return fetch(base + route, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

describe.skipIf(unavailable !== undefined)(`gateway state in PostgreSQL${unavailable ? ` (skipped: ${unavailable})` : ""}`, () => {
  let server: PostgresServer;
  beforeAll(async () => {
    server = await startPostgresServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  describe("one gateway on PostgreSQL", () => {
    let h: Harness;
    let url: string;
    beforeAll(async () => {
      url = await server.createDatabase("single");
      h = await startHarness(noHmac, undefined, url);
    });
    afterAll(() => h.close());

    it("runs the code and refresh grants with the same single-use rules as SQLite, and survives a restart", async () => {
      const code = await authorize(h);
      const first = await tokenRequest(h, codeGrant(code));
      expect(first.status).toBe(200);
      const tokens = (await first.json()) as Tokens;
      registerSecret(tokens.access_token, tokens.refresh_token);
      expect((await callApi(h, "/v2/crm/v1/x", tokens.access_token)).status).toBe(200);
      const rotated = (await (await tokenRequest(h, refreshGrant(tokens.refresh_token))).json()) as Tokens;
      registerSecret(rotated.access_token, rotated.refresh_token);

      await h.restart();
      expect((await callApi(h, "/v2/crm/v1/x", rotated.access_token)).status).toBe(200);
      // Replaying the code, then the old refresh token: refused, and the family is revoked.
      expect((await tokenRequest(h, codeGrant(code))).status).toBe(400);
      expect((await callApi(h, "/v2/crm/v1/x", rotated.access_token)).status).toBe(401);
      const other = await tokensFor(h);
      expect((await tokenRequest(h, refreshGrant(other.refresh_token))).status).toBe(200);
      expect((await tokenRequest(h, refreshGrant(other.refresh_token))).status).toBe(400);
    });

    it("keeps only hashes, in BIGINT milliseconds, with the same migrations recorded", async () => {
      const tokens = await tokensFor(h);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const dump = JSON.stringify([
          (await client.query("SELECT * FROM access_tokens")).rows,
          (await client.query("SELECT * FROM refresh_tokens")).rows,
          (await client.query("SELECT * FROM auth_codes")).rows,
        ]);
        expect(dump).not.toContain(tokens.access_token);
        expect(dump).not.toMatch(/rc[acr]_/);
        expect((await client.query("SELECT version FROM relcast_schema")).rows).toEqual([{ version: MIGRATIONS.length }]);
        const types = await client.query("SELECT data_type FROM information_schema.columns WHERE table_name = 'access_tokens' AND column_name = 'expires_at'");
        expect(types.rows).toEqual([{ data_type: "bigint" }]);
      } finally {
        await client.end();
      }
    });

    it("records a signature once, in BIGINT milliseconds, and purges it after its window", async () => {
      const clock = manualClock(new Date("2025-03-01T10:00:00Z"));
      const store = await openTokenStore(url, clock);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const signature = "4D64mbZ72fhq4FjVqtJ6/FG7+o+X8rg8eKjhDQqvNh8=";
        const expiresAt = clock().getTime() + 300_000;
        expect(await Promise.all([store.signatures.use(signature, expiresAt), store.signatures.use(signature, expiresAt)])).toEqual(expect.arrayContaining([true, false]));
        expect(await store.signatures.use(signature, expiresAt)).toBe(false);
        const rows = (await client.query("SELECT signature_hash, expires_at FROM hmac_replay")).rows as { signature_hash: string; expires_at: string }[];
        expect(rows).toHaveLength(1);
        expect(rows[0]!.signature_hash).toMatch(/^[0-9a-f]{64}$/);
        expect(Number(rows[0]!.expires_at)).toBe(expiresAt);
        clock.advance(300 + 61);
        await store.purgeExpired();
        expect((await client.query("SELECT count(*)::int AS n FROM hmac_replay")).rows).toEqual([{ n: 0 }]);
      } finally {
        await client.end();
        await store.close();
      }
    });
  });

  describe("choosing PostgreSQL from the command line", () => {
    let dir: string;
    let upstream: Upstream;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), "relcast-gateway-pg-cli-"));
      upstream = await startUpstream();
    });
    afterAll(async () => {
      await upstream?.close();
      await rm(dir, { recursive: true, force: true });
    });

    /** The schema versions the gateway recorded in `url`'s database. */
    async function schemaVersions(url: string): Promise<unknown[]> {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query("SELECT version FROM relcast_schema")).rows;
      } finally {
        await client.end();
      }
    }

    /** Starts the CLI, checks the state it names and that it answers, then stops it with exit code 0. */
    async function runOnce(args: string[], url: string): Promise<void> {
      const gateway = await startCli(args);
      try {
        expect(gateway.log).toContain(`state: ${url}`);
        expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
      } finally {
        expect(await stop(gateway.child)).toBe(0);
      }
    }

    it("the config's `database` field selects PostgreSQL, with no --db flag and no SQLite file", async () => {
      const url = await server.createDatabase("from_config");
      const configFile = path.join(dir, "from-config.json");
      await writeFile(configFile, JSON.stringify({ ...(await testConfig(upstream.url)), database: url }));
      await runOnce(["--config", configFile, "--port", "0"], url);
      expect(await schemaVersions(url)).toEqual([{ version: MIGRATIONS.length }]);
      expect(existsSync(path.join(dir, "gateway-state.sqlite"))).toBe(false);
    });

    it("the --db flag selects PostgreSQL over the config's SQLite `database`", async () => {
      const url = await server.createDatabase("from_flag");
      const configFile = path.join(dir, "from-flag.json");
      await writeFile(configFile, JSON.stringify({ ...(await testConfig(upstream.url)), database: "config-state.sqlite" }));
      await runOnce(["--config", configFile, "--port", "0", "--db", url], url);
      expect(await schemaVersions(url)).toEqual([{ version: MIGRATIONS.length }]);
      expect(existsSync(path.join(dir, "config-state.sqlite"))).toBe(false);
    });
  });

  describe("two gateway processes on one database", () => {
    let dir: string;
    let upstream: Upstream;
    let a: { child: ChildProcess; url: string };
    let b: { child: ChildProcess; url: string };
    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), "relcast-gateway-pg-"));
      upstream = await startUpstream();
      const configFile = path.join(dir, "gateway.json");
      await writeFile(configFile, JSON.stringify(await testConfig(upstream.url)));
      const url = await server.createDatabase("shared");
      [a, b] = await Promise.all([startCli(["--config", configFile, "--port", "0", "--db", url]), startCli(["--config", configFile, "--port", "0", "--db", url])]);
    });
    afterAll(async () => {
      const codes = await Promise.all([a, b].filter(Boolean).map((p) => stop(p.child)));
      await upstream?.close();
      await rm(dir, { recursive: true, force: true });
      expect(codes.every((c) => c === 0)).toBe(true);
    });

    /** Signs in on instance `via`; returns a consent form ready to submit. */
    async function form(via: string, extra: Record<string, string> = {}) {
      return readForm(await openConsent({ gateway: { url: via } } as Harness, { client_id: CLIENT.id, response_type: "code", scope: "crm", state: "st-1", ...extra }));
    }
    const approveFields = { username: USER.name, password: USER.password, decision: "approve" };

    async function tokensVia(via: string): Promise<Tokens> {
      const res = await submitForm({ gateway: { url: via } } as Harness, await form(via), approveFields);
      const code = new URL(res.headers.get("location")!).searchParams.get("code")!;
      const tokenRes = await post(via, "/auth/oauth2/token", codeGrant(code));
      expect(tokenRes.status).toBe(200);
      const tokens = (await tokenRes.json()) as Tokens;
      registerSecret(tokens.access_token, tokens.refresh_token);
      return tokens;
    }

    it("shares the state: a code from one instance is redeemed at the other, its token works at both", async () => {
      const tokens = await tokensVia(a.url);
      for (const via of [a.url, b.url]) {
        const res = await fetch(`${via}/v2/crm/v1/ping`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
        expect(res.status).toBe(200);
      }
    });

    it("20 concurrent refreshes of one token over both instances: exactly one succeeds, and the reuse revokes the family on both", async () => {
      const tokens = await tokensVia(a.url);
      const results = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const res = await post(i % 2 === 0 ? a.url : b.url, "/auth/oauth2/token", refreshGrant(tokens.refresh_token));
          return { status: res.status, body: (await res.json()) as Partial<Tokens> & { error?: string } };
        }),
      );
      const winners = results.filter((r) => r.status === 200);
      expect(winners).toHaveLength(1);
      expect(results.filter((r) => r.status === 400 && r.body.error === "invalid_grant")).toHaveLength(19);
      const won = winners[0]!.body as Tokens;
      registerSecret(won.access_token, won.refresh_token);
      for (const via of [a.url, b.url]) {
        const call = await fetch(`${via}/v2/crm/v1/ping`, { headers: { authorization: `Bearer ${won.access_token}` } });
        expect(call.status).toBe(401);
        const original = await fetch(`${via}/v2/crm/v1/ping`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
        expect(original.status).toBe(401);
        const refresh = await post(via, "/auth/oauth2/token", refreshGrant(won.refresh_token));
        expect(refresh.status).toBe(400);
      }
    });

    it("one authorization code, redeemed concurrently at both instances: exactly one token response", async () => {
      const res = await submitForm({ gateway: { url: a.url } } as Harness, await form(a.url), approveFields);
      const code = new URL(res.headers.get("location")!).searchParams.get("code")!;
      const statuses = await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          const r = await post(i % 2 === 0 ? a.url : b.url, "/auth/oauth2/token", codeGrant(code));
          const body = (await r.json()) as Partial<Tokens>;
          if (body.access_token) registerSecret(body.access_token, body.refresh_token!);
          return r.status;
        }),
      );
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 400)).toHaveLength(9);
    });

    it("one consent form, submitted concurrently to both instances: exactly one code", async () => {
      const f = await form(a.url);
      const answers = await Promise.all(
        Array.from({ length: 6 }, async (_, i) => {
          const r = await submitForm({ gateway: { url: i % 2 === 0 ? a.url : b.url } } as Harness, f, approveFields);
          await r.arrayBuffer();
          return { status: r.status, code: r.status === 303 ? new URL(r.headers.get("location")!).searchParams.get("code") : null };
        }),
      );
      expect(answers.filter((x) => x.status === 303 && x.code)).toHaveLength(1);
      expect(answers.filter((x) => x.status === 400)).toHaveLength(5);
    });

    /** A signed POST (system clock: the instances run on it) to `via`: its status and, when refused, the failed check. */
    async function signedPost(via: string, target: string, signed: Record<string, string>, body: string): Promise<{ status: number; check?: string }> {
      const res = await fetch(via + target, { method: "POST", headers: { ...signed, "content-type": "application/json" }, body });
      const answer = (await res.json()) as { check?: string };
      return { status: res.status, check: answer.check };
    }
    const sign = (method: string, target: string, body?: string) =>
      signRequest({ clientId: HMAC_CRED.id, secret: HMAC_CRED.secret, method, url: target, body }).headers as Record<string, string>;
    const seen = (url: string) => upstream.received.filter((r) => r.url === url).length;

    it("a signed POST accepted by one instance is refused as a replay by the other; a signed GET is repeatable on both", async () => {
      const body = '{"order":1}';
      const signed = sign("POST", "/v2/crm/v1/orders-shared", body);
      expect(await signedPost(a.url, "/v2/crm/v1/orders-shared", signed, body)).toEqual({ status: 200, check: undefined });
      expect(await signedPost(b.url, "/v2/crm/v1/orders-shared", signed, body)).toEqual({ status: 401, check: "replay" });
      expect(await signedPost(a.url, "/v2/crm/v1/orders-shared", signed, body)).toEqual({ status: 401, check: "replay" });
      expect(seen("/v1/orders-shared")).toBe(1);

      const get = sign("GET", "/v2/crm/v1/orders-shared?page=1");
      for (const via of [a.url, b.url, a.url]) expect((await fetch(`${via}/v2/crm/v1/orders-shared?page=1`, { headers: get })).status).toBe(200);
      expect(seen("/v1/orders-shared?page=1")).toBe(3);
    });

    it("20 concurrent copies of one signed POST over both instances: exactly one reaches the upstream", async () => {
      const body = '{"transfer":42}';
      const signed = sign("POST", "/v2/crm/v1/transfer-shared", body);
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => signedPost(i % 2 === 0 ? a.url : b.url, "/v2/crm/v1/transfer-shared", signed, body)));
      expect(answers.filter((x) => x.status === 200)).toHaveLength(1);
      expect(answers.filter((x) => x.status === 401 && x.check === "replay")).toHaveLength(19);
      expect(seen("/v1/transfer-shared")).toBe(1);
    });
  });
});
