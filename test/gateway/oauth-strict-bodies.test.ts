import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLIENT, startHarness, type Harness } from "./harness.js";
import { authorize, callApi, tokensFor } from "./oauth-driver.js";

/**
 * Issue 34 item 6: a token or revocation body means one thing. JSON with a
 * key twice (in any escape spelling, at any depth), `__proto__`, text that
 * is not Unicode, and forms whose escapes are not UTF-8 are refused as
 * invalid_request before anything is looked up, the way repeated form
 * parameters always were; the refused request changes nothing.
 */
const noHmac = () => ({ ok: false as const, check: "signature", message: "HMAC not used in this test" });

/** The parts of a valid code grant as JSON members, in order; a test adds or replaces members as raw text. */
function codeGrantMembers(code: string): string[] {
  return [`"client_id":"${CLIENT.id}"`, `"client_secret":"${CLIENT.secret}"`, '"grant_type":"authorization_code"', `"code":"${code}"`, '"scope":"crm"'];
}

function post(h: Harness, path: string, body: string | Uint8Array<ArrayBuffer>, contentType = "application/json"): Promise<Response> {
  return fetch(h.gateway.url + path, { method: "POST", headers: { "content-type": contentType }, body });
}

async function expectInvalidRequest(res: Response, description: RegExp): Promise<void> {
  expect(res.status).toBe(400);
  expect(res.headers.get("cache-control")).toBe("no-store");
  expect(await res.json()).toEqual({ error: "invalid_request", error_description: expect.stringMatching(description) });
}

describe("token and revocation bodies have one meaning", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(noHmac);
  });
  afterAll(() => h.close());

  it.each([
    ["a plain duplicate, the second one last", (m: string[]) => [...m, '"scope":"crm billing"'], /repeats the key "scope"/],
    ["a plain duplicate, the odd one first", (m: string[]) => ['"code":"rcc_forged"', ...m], /repeats the key "code"/],
    ["a duplicate spelled with a \\u escape", (m: string[]) => [...m, `"client\\u005fid":"${CLIENT.id}"`], /repeats the key "client_id"/],
    ["a duplicate spelled with escapes in every letter", (m: string[]) => [`"\\u0067\\u0072\\u0061\\u006e\\u0074_type":"refresh_token"`, ...m], /repeats the key "grant_type"/],
    ["a duplicate inside a nested object", (m: string[]) => [...m, '"extra":{"a":"1","b":{"c":"2","c":"3"}}'], /repeats the key "c" .*\$\.extra\.b/],
    ["a duplicate inside an array", (m: string[]) => [...m, '"extra":[{"a":1},{"a":1,"a":2}]'], /repeats the key "a" .*\$\.extra\[1\]/],
    ["__proto__", (m: string[]) => ['"__proto__":"x"', ...m], /__proto__/],
    ["__proto__ spelled with an escape", (m: string[]) => [...m, '"\\u005f_proto__":{"scope":"admin"}'], /__proto__/],
    ["a lone surrogate", (m: string[]) => [...m, '"state":"\\ud800"'], /lone surrogate/],
    ["a number where a string belongs", (m: string[]) => [...m.slice(0, 4), '"scope":1'], /parameter scope must be a string/],
    ["an array where a string belongs", (m: string[]) => [...m.slice(0, 4), '"scope":["crm"]'], /parameter scope must be a string/],
  ])("refuses %s, and the code still works afterwards", async (_name, edit, description) => {
    const code = await authorize(h);
    await expectInvalidRequest(await post(h, "/auth/oauth2/token", `{${edit(codeGrantMembers(code)).join(",")}}`), description);
    const good = await post(h, "/auth/oauth2/token", `{${codeGrantMembers(code).join(",")}}`);
    expect(good.status).toBe(200);
  });

  it.each([
    ["an array", "[]", /must be a JSON object/],
    ["a string", '"client_id"', /must be a JSON object/],
    ["null", "null", /must be a JSON object/],
    ["two objects", `{"client_id":"${CLIENT.id}"}{"client_id":"x"}`, /text after the JSON value/],
    ["a byte order mark", `\ufeff{"client_id":"${CLIENT.id}"}`, /not strict JSON/],
  ])("refuses %s as the whole JSON body", async (_name, body, description) => {
    await expectInvalidRequest(await post(h, "/auth/oauth2/token", body), description);
  });

  it("refuses a JSON body that is not UTF-8 instead of reading U+FFFD", async () => {
    const body = new Uint8Array(Buffer.concat([Buffer.from(`{"client_id":"${CLIENT.id}","client_secret":"`), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]));
    await expectInvalidRequest(await post(h, "/auth/oauth2/token", body), /not valid UTF-8/);
  });

  it("refuses form fields whose escapes are not UTF-8, __proto__, and a charset other than UTF-8", async () => {
    const form = "application/x-www-form-urlencoded";
    await expectInvalidRequest(await post(h, "/auth/oauth2/token", `client_id=${CLIENT.id}&client_secret=%FF%FE`, form), /value of parameter client_secret is not valid percent-encoded UTF-8/);
    await expectInvalidRequest(await post(h, "/auth/oauth2/token", `client_id=${CLIENT.id}&client_secret=%ED%A0%80`, form), /not valid percent-encoded UTF-8/);
    await expectInvalidRequest(await post(h, "/auth/oauth2/token", `client_id=${CLIENT.id}&client%5Fid=${CLIENT.id}`, form), /parameter client_id is repeated/);
    await expectInvalidRequest(await post(h, "/auth/oauth2/token", `__proto__=x&client_id=${CLIENT.id}`, form), /__proto__/);
    await expectInvalidRequest(await post(h, "/auth/oauth2/token", `client_id=${CLIENT.id}`, `${form}; charset=iso-8859-1`), /charset "iso-8859-1" is not supported/);
    await expectInvalidRequest(await post(h, "/auth/oauth2/token", `client_id=${CLIENT.id}`, `${form}; charset=utf-8; charset=latin1`), /charset "latin1" is not supported/);
    // The secret itself is never echoed in the refusal.
    const echoed = await post(h, "/auth/oauth2/token", `client_id=${CLIENT.id}&client_secret=top-secret-%FF`, form);
    expect(await echoed.text()).not.toContain("top-secret");
  });

  it("refuses Basic credentials that are not UTF-8 instead of reading U+FFFD", async () => {
    const basic = Buffer.concat([Buffer.from(`${CLIENT.id}:`), Buffer.from([0xc3, 0x28])]).toString("base64");
    const res = await fetch(h.gateway.url + "/auth/oauth2/token", { method: "POST", headers: { "content-type": "application/json", authorization: `Basic ${basic}` }, body: "{}" });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "invalid_client", error_description: "malformed Basic credentials (not UTF-8)" });
  });

  it("still takes JSON null as an omitted parameter and a UTF-8 charset parameter", async () => {
    const code = await authorize(h);
    const res = await post(h, "/auth/oauth2/token", `{${[...codeGrantMembers(code), '"redirect_uri":null'].join(",")}}`, 'application/json; charset="UTF-8"');
    expect(res.status).toBe(200);
  });

  it("a revocation naming two tokens is refused and revokes neither", async () => {
    const tokens = await tokensFor(h);
    const credentials = `"client_id":"${CLIENT.id}","client_secret":"${CLIENT.secret}"`;
    await expectInvalidRequest(await post(h, "/auth/oauth2/revoke", `{${credentials},"token":"rca_unknown","token":"${tokens.access_token}"}`), /repeats the key "token"/);
    await expectInvalidRequest(await post(h, "/auth/oauth2/revoke", `{${credentials},"token":"rca_unknown","\\u0074oken":"${tokens.access_token}"}`), /repeats the key "token"/);
    expect((await callApi(h, "/v2/crm/v1/me", tokens.access_token)).status).toBe(200);
  });
});
