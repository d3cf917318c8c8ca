import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ConnectionDrain } from "../../src/gateway/http/connection-drain.js";

/**
 * The drain's own bookkeeping on a plain node server: what it tracks goes
 * away with each connection, also for answers node never finishes (a
 * response queued behind another when its connection dies emits no close).
 */
describe("ConnectionDrain", () => {
  let server: http.Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server?.listening ? server.close(() => resolve()) : resolve()));
  });

  it("forgets requests pipelined on a connection that dies before they are answered", async () => {
    server = http.createServer();
    let seen = 0;
    let allSeen!: () => void;
    const three = new Promise<void>((resolve) => (allSeen = resolve));
    const drain = new ConnectionDrain(server, () => {
      // Never answered: the first blocks the two queued behind it.
      if (++seen === 3) allSeen();
    });
    const closedOnServer = new Promise<void>((resolve) => server!.once("connection", (s: net.Socket) => s.once("close", () => resolve())));
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const client = net.connect((server.address() as AddressInfo).port, "127.0.0.1");
    client.on("error", () => undefined);
    client.write("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nGET /c HTTP/1.1\r\nHost: x\r\n\r\n");
    await three;
    expect(drain.inFlight).toBe(3);
    client.destroy();
    await closedOnServer;
    expect(drain.inFlight).toBe(0);
  });
});
