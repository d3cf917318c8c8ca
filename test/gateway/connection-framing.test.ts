import net from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { kitVerifier } from "../../src/gateway/hmac-kit.js";
import { signRequest } from "../../src/hmac/index.js";
import { HMAC_CRED, startHarness, USER, type Harness } from "./harness.js";
import { callApi, tokensFor } from "./oauth-driver.js";

/**
 * The upstream request's framing is the gateway's own, never the caller's
 * header lines: a Connection list that names a framing or authentication
 * header is refused, a body goes upstream framed by what node's parser
 * read, and nothing pipelined behind an answer that closes the connection
 * reaches the upstream.
 */
describe("framing and Connection lists", () => {
  let h: Harness;
  let token: string;
  beforeAll(async () => {
    h = await startHarness(kitVerifier, (c) => {
      c.hmac = { ...c.hmac, maxBodyBytes: 64 };
    });
    token = (await tokensFor(h)).access_token;
  });
  afterAll(() => h.close());
  beforeEach(() => {
    h.upstream.received.length = 0;
  });

  /** Sends raw bytes on one connection and reads until the gateway closes it. */
  function exchange(bytes: string): Promise<string> {
    const url = new URL(h.gateway.url);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname, () => socket.write(bytes));
      let text = "";
      socket.setEncoding("latin1");
      socket.on("data", (c: string) => (text += c));
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
    });
  }

  /** The upstream requests seen, once a sentinel sent after them has arrived (it travels the same pooled upstream connections). */
  async function upstreamUrls(): Promise<string[]> {
    const sentinel = await callApi(h, "/v2/crm/v1/sentinel", token);
    expect(sentinel.status).toBe(200);
    return h.upstream.received.map((r) => r.url).filter((u) => u !== "/v1/sentinel");
  }

  const smuggled = "DELETE /v1/admin/users/bob HTTP/1.1\r\nHost: x\r\nX-Relcast-User: admin\r\nX-Relcast-Scope: admin\r\nContent-Length: 0\r\n\r\n";
  const host = () => new URL(h.gateway.url).host;
  const get = (connection: string, extra = "") =>
    `GET /v2/crm/v1/ping HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\n${connection}${extra}Content-Length: ${smuggled.length}\r\n\r\n${smuggled}`;

  it.each([
    "Connection: keep-alive, content-length\r\n",
    "Connection: Content-Length\r\n",
    "Connection: keep-alive\r\nConnection: content-length\r\n",
    "Connection: close,  CONTENT-LENGTH ,\r\n",
    "Connection: content_length\r\n",
    "Connection: host\r\n",
    "Connection: authorization\r\n",
    "Connection: date\r\n",
    "Connection: digest\r\n",
  ])("refuses %j with 400, closes the connection, and forwards nothing", async (connection) => {
    const answer = await exchange(get(connection));
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/Connection must not name|Connection header must not name/);
    expect(answer.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(await upstreamUrls()).toEqual([]);
  });

  it("refuses a chunked request whose Connection names transfer-encoding", async () => {
    const body = `${smuggled.length.toString(16)}\r\n${smuggled}\r\n0\r\n\r\n`;
    const answer = await exchange(`POST /v2/crm/v1/items HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\nConnection: transfer-encoding\r\nTransfer-Encoding: chunked\r\n\r\n${body}`);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(await upstreamUrls()).toEqual([]);
  });

  it.each(["gzip, chunked", "x-custom, chunked", "chunked, chunked"])("refuses Transfer-Encoding: %s with 501 (the upstream leg would drop the coding) and forwards nothing", async (coding) => {
    const body = `${smuggled.length.toString(16)}\r\n${smuggled}\r\n0\r\n\r\n`;
    const answer = await exchange(`POST /v2/crm/v1/items HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\nTransfer-Encoding: ${coding}\r\n\r\n${body}`);
    // node's own parser may refuse some spellings first (400); either way nothing reaches the upstream.
    expect(answer).toMatch(/^HTTP\/1\.1 (501|400) /);
    expect(answer.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(1);
    expect(await upstreamUrls()).toEqual([]);
  });

  it.each(["Connection: keep-alive\r\n", "", "Content-Length: 3\r\n"])("refuses an HTTP/1.0 request with Transfer-Encoding (%j) with 400, closes, and forwards neither it nor what is pipelined behind it", async (extra) => {
    const body = `3\r\nabc\r\n0\r\n\r\n`;
    const behind = `GET /v2/crm/v1/next HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\n\r\n`;
    const answer = await exchange(`POST /v2/crm/v1/items HTTP/1.0\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\nTransfer-Encoding: chunked\r\n${extra}\r\n${body}${behind}`);
    // node's parser refuses Transfer-Encoding together with Content-Length itself (400 too).
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(1);
    if (extra !== "Content-Length: 3\r\n") {
      expect(answer).toMatch(/HTTP\/1\.0 request must not carry Transfer-Encoding/);
      expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    }
    expect(await upstreamUrls()).toEqual([]);
  });

  it("refuses an empty Transfer-Encoding header with 400 saying it is empty, and forwards nothing", async () => {
    const answer = await exchange(`POST /v2/crm/v1/items HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\nTransfer-Encoding: \r\nContent-Length: 2\r\n\r\n{}`);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(1);
    expect(await upstreamUrls()).toEqual([]);
  });

  it("refuses a request target with a fragment with 400 and forwards nothing; %23 in the path still passes", async () => {
    const answer = await exchange(`GET /v2/crm/v1/x#frag HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 400 [\s\S]*must not contain `#`/);
    const encoded = await exchange(`GET /v2/crm/v1/x%23frag HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`);
    expect(encoded).toMatch(/^HTTP\/1\.1 200 /);
    expect(await upstreamUrls()).toEqual(["/v1/x%23frag"]);
  });

  it("refuses gzip before chunked with 501 naming the coding, and still forwards a plain chunked body", async () => {
    const body = `2\r\n{}\r\n0\r\n\r\n`;
    const refused = await exchange(`POST /v2/crm/v1/items HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\nTransfer-Encoding: gzip, chunked\r\n\r\n${body}`);
    expect(refused).toMatch(/^HTTP\/1\.1 501 [\s\S]*transfer coding gzip is not supported/);
    const plain = await exchange(`POST /v2/crm/v1/items HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${body}`);
    expect(plain).toMatch(/^HTTP\/1\.1 200 /);
    expect(await upstreamUrls()).toEqual(["/v1/items"]);
    expect(h.upstream.received[0]!.body).toBe("{}");
  });

  it("forwards a GET body framed by its length when Connection names only a hop-by-hop header", async () => {
    const answer = await exchange(get("Connection: close, x-hop\r\n", "X-Hop: for the gateway\r\n"));
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(await upstreamUrls()).toEqual(["/v1/ping"]);
    const seen = h.upstream.received[0]!;
    expect(seen.body).toBe(smuggled);
    expect(seen.headers["content-length"]).toBe(String(smuggled.length));
    expect(seen.headers["x-hop"]).toBeUndefined();
    expect(seen.headers["x-relcast-user"]).toBe(USER.name);
  });

  it("forwards nothing pipelined behind an answer that closes the connection", async () => {
    // The first request's body is over the HMAC body limit (413, Connection: close); the second is a valid Bearer GET.
    const url = `${h.gateway.url}/v2/crm/v1/items`;
    const body = "x".repeat(200);
    const signed = signRequest({ method: "POST", url, body: Buffer.from(body), clientId: HMAC_CRED.id, secret: HMAC_CRED.secret, date: h.clock() });
    const lines = Object.entries(signed.headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
    const first = `POST /v2/crm/v1/items HTTP/1.1\r\nHost: ${host()}\r\n${lines}Content-Length: ${body.length}\r\n\r\n${body}`;
    const second = `GET /v2/crm/v1/behind HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\n\r\n`;
    const answer = await exchange(first + second + second);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(await upstreamUrls()).toEqual([]);
  });

  it("answers pipelined requests in order, each forwarded once", async () => {
    const one = (path: string, close = "") => `GET /v2/crm/v1/${path} HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\n${close}\r\n`;
    const answer = await exchange(one("a") + one("b") + one("c", "Connection: close\r\n"));
    const urls = [...answer.matchAll(/"url":"([^"]+)"/g)].map((m) => m[1]);
    expect(urls).toEqual(["/v1/a", "/v1/b", "/v1/c"]);
    expect(await upstreamUrls()).toEqual(["/v1/a", "/v1/b", "/v1/c"]);
  });

  it.each([
    ["Connection: upgrade\r\nUpgrade: h2c\r\n", "bearer"],
    ["Connection: keep-alive\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: websocket\r\n", "bearer"],
    ["Connection: UPGRADE\r\nUpgrade: h2c\r\n", "hmac"],
  ])("answers a request asking to upgrade (%j, %s) as a plain one, says Connection: close, and handles nothing behind it", async (asks, auth) => {
    const url = `${h.gateway.url}/v2/crm/v1/upgrade-asked`;
    const credentials =
      auth === "bearer"
        ? `Authorization: Bearer ${token}\r\n`
        : Object.entries(signRequest({ method: "GET", url, clientId: HMAC_CRED.id, secret: HMAC_CRED.secret, date: h.clock() }).headers)
            .map(([k, v]) => `${k}: ${v}\r\n`)
            .join("");
    const behind = `POST /v2/crm/v1/behind-upgrade HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\nContent-Length: 2\r\n\r\n{}`;
    const answer = await exchange(`GET /v2/crm/v1/upgrade-asked HTTP/1.1\r\nHost: ${host()}\r\n${credentials}${asks}\r\n${behind}`);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(1);
    const head = answer.slice(0, answer.indexOf("\r\n\r\n"));
    expect(head).toMatch(/^connection: close$/im);
    expect(head).not.toMatch(/^upgrade:/im);
    const forwarded = await upstreamUrls();
    expect(forwarded).toEqual(["/v1/upgrade-asked"]);
    expect(h.upstream.received[0]!.headers["upgrade"]).toBeUndefined();
  });

  it("answers CONNECT with 501 and Connection: close after the requests pipelined before it, and runs nothing behind it", async () => {
    const one = (p: string) => `GET /v2/crm/v1/${p} HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\n\r\n`;
    const connect = `CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n`;
    const answer = await exchange(one("before-connect-1") + one("before-connect-2") + connect + one("behind-connect"));
    const statuses = [...answer.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
    expect(statuses).toEqual(["200", "200", "501"]);
    expect(answer.slice(answer.lastIndexOf("HTTP/1.1 501"))).toMatch(/^connection: close$/im);
    expect(await upstreamUrls()).toEqual(["/v1/before-connect-1", "/v1/before-connect-2"]);
    // Alone on its connection, too.
    expect(await exchange(connect)).toMatch(/^HTTP\/1\.1 501 [\s\S]*connection: close/i);
  });

  it("refuses an HTTP/1.1 request without Host in order, and handles nothing behind it", async () => {
    const behind = `PUT /v2/crm/v1/behind-nohost HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\nContent-Length: 2\r\n\r\n{}`;
    const answer = await exchange(`GET /healthz HTTP/1.1\r\n\r\n${behind}`);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain("needs a Host header");
    expect(answer.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(1);
    const twoHosts = await exchange(`GET /v2/crm/v1/ping HTTP/1.1\r\nHost: ${host()}\r\nHost: evil.example\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`);
    expect(twoHosts).toMatch(/^HTTP\/1\.1 400 [\s\S]*the host header appears more than once/);
    expect(await upstreamUrls()).toEqual([]);
  });

  it("closes a connection that pipelines more than 32 requests ahead of its answers, running none of those waiting", async () => {
    const one = (i: number) => `GET /v2/crm/v1/deep-${i} HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\n\r\n`;
    const answer = await exchange(Array.from({ length: 40 }, (_, i) => one(i)).join(""));
    expect((answer.match(/HTTP\/1\.1 /g) ?? []).length).toBeLessThanOrEqual(1);
    expect((await upstreamUrls()).length).toBeLessThanOrEqual(1);
  });
});
