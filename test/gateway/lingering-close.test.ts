import diagnostics from "node:diagnostics_channel";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kitVerifier } from "../../src/gateway/hmac-kit.js";
import { startHarness, type Harness } from "./harness.js";
import { callApi, tokensFor } from "./oauth-driver.js";

/**
 * A connection closed after an answer saying `Connection: close` is closed
 * in stages (RFC 9112 §9.6, src/gateway/http/lingering-close.ts): the
 * gateway half-closes and reads on, so bytes the client sent meanwhile (a
 * pipelined request) get no reset, which would erase the answers the client
 * has not read yet. The framing property test, seed 20261127, found it: a
 * PUT carried out upstream whose answer never reached its caller.
 */
describe("closing a connection after an answer that says so", () => {
  let h: Harness;
  let token: string;
  beforeAll(async () => {
    h = await startHarness(kitVerifier);
    token = (await tokensFor(h)).access_token;
  });
  afterAll(() => h.close());

  it("reads on after the last answer: a client still sending gets the answer, not a reset", async () => {
    const url = new URL(h.gateway.url);
    // Refused with 400 and Connection: close (a Connection list naming a framing header).
    const closing = `GET /v2/crm/v1/ping HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\nConnection: content-length\r\nContent-Length: 0\r\n\r\n`;
    const behind = `PUT /v2/crm/v1/behind HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\nContent-Length: 2\r\n\r\n{}`;
    const socket = net.connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    // A client busy elsewhere: the answer waits unread (node buffers it, unread, while the stream is paused).
    socket.pause();
    const port = socket.localPort;
    let gatewaySide: net.Socket | undefined;
    // The moment node has finished the closing answer (the connection is to close next), the start of a pipelined
    // request reaches the gateway's socket: after node's last read of it, before its close (deterministically: node
    // closes it once the half-close is done, before it polls the socket again).
    const onFinish = (message: unknown) => {
      const { socket: server } = message as { socket: net.Socket };
      if (server.remotePort !== port || gatewaySide) return;
      gatewaySide = server;
      socket.write(behind.slice(0, 20));
    };
    diagnostics.subscribe("http.server.response.finish", onFinish);
    const outcome = new Promise<{ text: string; error: string | undefined }>((resolve) => {
      let text = "";
      let error: string | undefined;
      socket.setEncoding("latin1");
      socket.on("data", (c: string) => (text += c));
      socket.on("end", () => socket.end());
      socket.on("error", (err: NodeJS.ErrnoException) => (error = err.code));
      socket.on("close", () => resolve({ text, error }));
    });
    try {
      socket.write(closing);
      await until(() => gatewaySide !== undefined);
      // The rest of the pipelined request once the gateway's socket is closed, or 200 ms on (a socket still open).
      await Promise.race([new Promise((resolve) => gatewaySide!.once("close", resolve)), new Promise((resolve) => setTimeout(resolve, 200))]);
      if (!socket.destroyed) socket.write(behind.slice(20));
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.resume();
      const { text, error } = await outcome;
      expect(error).toBeUndefined();
      expect(text).toMatch(/^HTTP\/1\.1 400 /);
      expect(text).toMatch(/\r\nconnection: close\r\n/i);
      expect(text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
      // The request behind the close was read and dropped, not forwarded.
      expect((await callApi(h, "/v2/crm/v1/sentinel", token)).status).toBe(200);
      expect(h.upstream.received.map((r) => r.url)).not.toContain("/v1/behind");
    } finally {
      diagnostics.unsubscribe("http.server.response.finish", onFinish);
      socket.destroy();
    }
  });
});

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error("timed out");
}
