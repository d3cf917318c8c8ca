import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { authorizationFor, DATE, DEPRECATED_V1_SIGNATURE, VECTORS, type Vector } from "./fixed-vectors.js";

/** `relcast hmac sign|verify` run as a child process against the built CLI. */
const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "cli", "relcast.mjs");
const dir = mkdtempSync(join(tmpdir(), "relcast-hmac-"));
const file = (name: string, content: string | Buffer) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

function relcast(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", env: { ...process.env, GITHUB_ACTIONS: "" } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const [GET_V, POST_V] = VECTORS as [Vector, Vector];
const secretFile = (v: Vector) => file(`secret-${v.clientId}`, `${v.secret}\n`);

describe("relcast hmac sign", () => {
  it.each(VECTORS.map((v) => [v.name, v] as const))("prints the fixed vector's headers: %s", (_name, v) => {
    const args = ["hmac", "sign", "--client-id", v.clientId, "--secret-file", secretFile(v), "--method", v.method, "--url", v.target, "--date", v.date];
    if (v.body !== undefined) args.push("--body-file", file(`body-${v.clientId}-${v.method}`, Buffer.from(v.body, "utf8")));
    const r = relcast(args);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = [`Date: ${v.date}`, ...(v.digest ? [`Digest: ${v.digest}`] : []), `Authorization: ${authorizationFor(v.clientId, v.signature)}`];
    expect(r.stdout).toBe(`${lines.join("\n")}\n`);
  });

  it("refuses a non-IMF-fixdate --date and a target with a space, with E_INPUT", () => {
    const base = ["hmac", "sign", "--client-id", "c", "--secret-file", secretFile(GET_V), "--method", "GET"];
    const badDate = relcast([...base, "--url", "/x", "--date", "2025-01-07T10:00:00Z"]);
    expect(badDate.code).toBe(4);
    expect(badDate.stderr).toMatch(/IMF-fixdate/);
    const badUrl = relcast([...base, "--url", "/x y"]);
    expect(badUrl.code).toBe(4);
    expect(badUrl.stderr).toMatch(/percent-encode/);
  });

  it("fails cleanly on a missing secret file and never prints the secret", () => {
    const r = relcast(["hmac", "sign", "--client-id", "c", "--secret-file", join(dir, "nope"), "--method", "GET", "--url", "/"]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/cannot read secret file .*ENOENT/);
  });
});

describe("relcast hmac verify", () => {
  const verify = (v: Vector, headers: string[], extra: string[] = []) =>
    relcast(["hmac", "verify", "--secret-file", secretFile(v), "--method", v.method, "--url", v.target, ...headers.flatMap((h) => ["--header", h]), ...extra]);
  const goodHeaders = (v: Vector) => [`Date: ${v.date}`, `Authorization: ${authorizationFor(v.clientId, v.signature)}`, ...(v.digest ? [`Digest: ${v.digest}`] : [])];

  it("exits 0 with valid at 299 s and 1 with date-skew at 300 s", () => {
    const ok = verify(GET_V, goodHeaders(GET_V), ["--now", "Tue, 07 Jan 2025 10:04:59 GMT"]);
    expect(ok).toMatchObject({ code: 0, stdout: "valid\n" });
    const early = verify(GET_V, goodHeaders(GET_V), ["--now", "Tue, 07 Jan 2025 09:55:01 GMT"]);
    expect(early).toMatchObject({ code: 0, stdout: "valid\n" });
    const late = verify(GET_V, goodHeaders(GET_V), ["--now", "Tue, 07 Jan 2025 10:05:00 GMT"]);
    expect(late.code).toBe(1);
    expect(late.stdout).toMatch(/^invalid: date-skew\nreason: the Date header is 300 s behind/);
  });

  it("prints the expected signing string for a wrong signature, never the secret", () => {
    const r = verify(GET_V, [`Date: ${DATE}`, `Authorization: ${authorizationFor("client-1", POST_V.signature)}`], ["--now", DATE]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("invalid: signature\n");
    expect(r.stdout).toContain(`  date: ${DATE}\n  GET /v2/crm/v1/items?b=2&a=1 HTTP/1.1\n`);
    expect(r.stdout).toContain(JSON.stringify(`date: ${DATE}\nGET /v2/crm/v1/items?b=2&a=1 HTTP/1.1`));
    expect(r.stdout + r.stderr).not.toContain(GET_V.secret);
  });

  it("checks the body file against the Digest and says what to send", () => {
    const body = file("body-changed", '{"a": 1}');
    const r = verify(POST_V, goodHeaders(POST_V), ["--now", DATE, "--body-file", body]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^invalid: digest-mismatch\n/);
    expect(r.stdout).toContain("expected Digest header: SHA-256=+dhgKMbg1k4iUYb5astpM4ssWXZN95FiEH9cS7NNExA=");
    expect(verify(POST_V, goodHeaders(POST_V), ["--now", DATE, "--body-file", file("body-ok", '{"a":1}')]).code).toBe(0);
  });

  it("refuses the deprecated request-line unless allowed", () => {
    const headers = [`Date: ${DATE}`, `Authorization: ${authorizationFor("client-1", DEPRECATED_V1_SIGNATURE)}`];
    const refused = verify(GET_V, headers, ["--now", DATE]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/^invalid: deprecated-request-line\n/);
    const allowed = verify(GET_V, headers, ["--now", DATE, "--allow-deprecated-request-line"]);
    expect(allowed).toMatchObject({ code: 0, stdout: "valid\n" });
    expect(allowed.stderr).toMatch(/deprecated request-line/);
  });

  it("reports grammar errors and unknown clients by check name", () => {
    const grammar = verify(GET_V, [`Date: ${DATE}`, `Authorization: hmac username="client-1",algorithm="hmac-sha256"`], ["--now", DATE]);
    expect(grammar.stdout).toMatch(/^invalid: authorization-grammar\n/);
    const other = verify(GET_V, goodHeaders(GET_V), ["--now", DATE, "--client-id", "someone-else"]);
    expect(other.stdout).toMatch(/^invalid: unknown-client\n/);
    expect(other.code).toBe(1);
  });

  it("treats a malformed --header or --now as a usage error (exit 2)", () => {
    expect(verify(GET_V, ["no colon here"], ["--now", DATE]).code).toBe(2);
    expect(verify(GET_V, goodHeaders(GET_V), ["--now", "yesterday"]).code).toBe(2);
  });
});
