import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/gateway/clock.js";
import { SignInThrottle } from "../../src/gateway/oauth/sign-in-throttle.js";
import { openTokenStore } from "../../src/gateway/state/open-store.js";
import type { TokenStore } from "../../src/gateway/state/token-store.js";
import { CLIENT, USER, startHarness, type Harness } from "./harness.js";
import { openConsent, readForm, submitForm, type ConsentForm } from "./oauth-driver.js";

/**
 * Issue 34 item 5: sign-in attempts are reserved before the password is
 * checked, so however many arrive at once, at most `signIn.maxFailures` of
 * them are checked per user name and window.
 */
const noHmac = () => ({ ok: false as const, check: "signature", message: "unused" });

async function freshForm(h: Harness): Promise<ConsentForm> {
  return readForm(await openConsent(h, { client_id: CLIENT.id, response_type: "code", scope: "crm" }));
}

/** Sends every password at once (one connection each) for `username`; resolves to the statuses in sending order. */
async function burst(h: Harness, form: ConsentForm, username: string, passwords: string[]): Promise<number[]> {
  return Promise.all(
    passwords.map(async (password) => {
      const res = await submitForm(h, form, { username, password, decision: "approve" });
      await res.arrayBuffer();
      return res.status;
    }),
  );
}

describe("sign-in lockout over HTTP (SQLite state)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(noHmac);
  });
  afterAll(() => h?.close());

  it("40 passwords for one user at once: only 5 reach the password check, and the right one, sent last, does not sign in", async () => {
    const passwords = [...Array.from({ length: 39 }, (_, i) => `wrong-${i}`), USER.password];
    const statuses = await burst(h, await freshForm(h), USER.name, passwords);
    // An answer other than 429 is an attempt whose password was checked (200: wrong, 303: signed in).
    const checked = statuses.filter((s) => s !== 429);
    expect(checked).toHaveLength(5);
    expect(statuses.filter((s) => s !== 429 && s !== 200 && s !== 303)).toEqual([]);
    if (!statuses.includes(303)) {
      // The right password arrived after the five reservations: refused, and the name stays locked.
      const again = await submitForm(h, await freshForm(h), { username: USER.name, password: USER.password, decision: "approve" });
      expect(again.status).toBe(429);
      expect(Number(again.headers.get("retry-after"))).toBe(900);
    }
    h.clock.advance(900);
    const after = await submitForm(h, await freshForm(h), { username: USER.name, password: USER.password, decision: "approve" });
    expect(after.status).toBe(303);
  });

  it("a user name that is not configured is answered like a real one, one by one and all at once", async () => {
    const sequence = async (username: string) => {
      const form = await freshForm(h);
      const answers: string[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await submitForm(h, form, { username, password: `guess-${i}`, decision: "approve" });
        // The page, without the name typed in and the form's own sealed request.
        const page = (await res.text()).replaceAll(username, "NAME").replace(/name="request" value="[^"]*"/, "");
        answers.push(`${res.status} ${res.headers.get("retry-after")} ${page}`);
      }
      return answers;
    };
    const real = await sequence(USER.name);
    const invented = await sequence("mallory");
    expect(invented).toEqual(real);
    expect(real.map((a) => a.split(" ")[0])).toEqual(["200", "200", "200", "200", "200", "429"]);
    h.clock.advance(900);

    const statuses = await burst(h, await freshForm(h), "nobody-here", Array.from({ length: 20 }, (_, i) => `x-${i}`));
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    h.clock.advance(900);
  });

  it("a right password clears the count; a wrong one keeps its reservation", async () => {
    const form = await freshForm(h);
    for (let i = 0; i < 4; i++) expect((await submitForm(h, form, { username: USER.name, password: `nope-${i}`, decision: "approve" })).status).toBe(200);
    expect((await submitForm(h, form, { username: USER.name, password: USER.password, decision: "approve" })).status).toBe(303);
    const next = await freshForm(h);
    for (let i = 0; i < 5; i++) expect((await submitForm(h, next, { username: USER.name, password: `nope-${i}`, decision: "approve" })).status).toBe(200);
    expect((await submitForm(h, next, { username: USER.name, password: USER.password, decision: "approve" })).status).toBe(429);
    h.clock.advance(900);
  });
});

describe("the configured limit (signIn.maxFailures, signIn.windowSeconds)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(noHmac, (c) => {
      c.signIn = { maxFailures: 2, windowSeconds: 120 };
    });
  });
  afterAll(() => h?.close());

  it("checks at most maxFailures passwords per window", async () => {
    const statuses = await burst(h, await freshForm(h), USER.name, Array.from({ length: 12 }, (_, i) => `wrong-${i}`));
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    const locked = await submitForm(h, await freshForm(h), { username: USER.name, password: USER.password, decision: "approve" });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBe(120);
    h.clock.advance(120);
    expect((await submitForm(h, await freshForm(h), { username: USER.name, password: USER.password, decision: "approve" })).status).toBe(303);
  });
});

describe("sign-in attempts in the state", () => {
  let dir: string;
  let file: string;
  let store: TokenStore;
  const clock = manualClock(new Date("2025-03-01T10:00:00Z"));
  const key = Buffer.alloc(32, 7);
  const throttle = (slots: number) => new SignInThrottle({ store, users: new Set(["alice"]), key, maxFailures: 3, windowSeconds: 600, unknownSlots: slots });
  const rows = () => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare("SELECT name_key AS key, attempts FROM sign_in_attempts ORDER BY name_key").all() as { key: string; attempts: number }[];
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-sign-in-"));
    file = path.join(dir, "state.sqlite");
    store = await openTokenStore(file, clock);
  });
  afterAll(async () => {
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a flood of invented names stays in a fixed number of rows and leaves a real user's count alone", async () => {
    const t = throttle(8);
    expect(await t.reserve("alice")).toEqual({ ok: true });
    expect(await t.reserve("alice")).toEqual({ ok: true });
    await Promise.all(Array.from({ length: 500 }, (_, i) => t.reserve(`invented-${i}`)));
    const stored = rows();
    expect(stored.filter((r) => r.key.startsWith("slot:")).length).toBeLessThanOrEqual(8);
    expect(stored.filter((r) => r.key.startsWith("user:"))).toEqual([{ key: expect.any(String), attempts: 2 }]);
    expect(JSON.stringify(stored)).not.toMatch(/alice|invented/);
    // alice has one attempt left in this window, however many other names were tried.
    expect(await t.reserve("alice")).toEqual({ ok: true });
    expect(await t.reserve("alice")).toEqual({ ok: false, retryAfterSeconds: 600 });
  });

  it("concurrent reservations count one by one; the window's end and the purge forget them", async () => {
    const t = throttle(8);
    const results = await Promise.all(Array.from({ length: 30 }, () => t.reserve("someone")));
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    clock.advance(300);
    expect(await t.reserve("someone")).toEqual({ ok: false, retryAfterSeconds: 300 });
    clock.advance(300);
    expect(await t.reserve("someone")).toEqual({ ok: true });
    clock.advance(600);
    await store.purgeExpired();
    expect(rows()).toEqual([]);
  });
});
