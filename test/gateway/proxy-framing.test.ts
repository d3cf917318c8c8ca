import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, USER, type Harness } from "./harness.js";
import { tokensFor } from "./oauth-driver.js";

const noHmac = () => ({ ok: false as const, check: "signature", message: "unused" });

/**
 * A streamed request body keeps its framing upstream whatever the method:
 * a chunked GET body sent on unframed would be read by the upstream as a
 * request of its own, past the gateway's checks and with the caller's own
 * identity headers.
 */
describe("proxy framing", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(noHmac);
  });
  afterAll(() => h.close());

  it("sends a chunked GET body upstream chunked, not as a second request", async () => {
    const { access_token } = await tokensFor(h);
    const inner = "GET /v1/admin HTTP/1.1\r\nHost: x\r\nx-relcast-user: admin\r\nContent-Length: 0\r\n\r\n";
    const url = new URL(h.gateway.url);
    const head = `GET /v2/crm/v1/ping HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${access_token}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`;
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname, () => socket.write(`${head}${inner.length.toString(16)}\r\n${inner}\r\n0\r\n\r\n`));
      let text = "";
      socket.setEncoding("utf8");
      socket.on("data", (c: string) => (text += c));
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(h.upstream.received.map((r) => r.url)).toEqual(["/v1/ping"]);
    expect(h.upstream.received[0]).toMatchObject({ method: "GET", body: inner, headers: { "transfer-encoding": "chunked", "x-relcast-user": USER.name } });
  });
});
