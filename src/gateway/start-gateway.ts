import { getRequestListener } from "@hono/node-server";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { silentLogger, type Logger } from "../core/logger.js";
import { systemClock, type Clock } from "./clock.js";
import type { GatewayConfig } from "./config-schema.js";
import type { HmacVerifier } from "./hmac-verifier.js";
import { createGatewayApp, type RouteSet } from "./server.js";
import { openGatewayDb } from "./state/db.js";

/**
 * Opens the state file and listens. Header size and timeouts are bounded
 * here for every route; body limits are per route (see server.ts).
 */
export interface StartGatewayOptions {
  config: GatewayConfig;
  dbFile: string;
  verifyHmac: HmacVerifier;
  port?: number;
  host?: string;
  clock?: Clock;
  routes?: RouteSet;
  logger?: Logger;
}

export interface RunningGateway {
  url: string;
  port: number;
  close(): Promise<void>;
}

const PURGE_INTERVAL_MS = 3600 * 1000;

/** A request node-server cannot turn into a URL (backslash in the path, bad Host): our JSON 400, not a bare text one. */
function badRequestTarget(): Response {
  const body = JSON.stringify({ error: "invalid_request", error_description: "the request target or Host header is malformed" });
  return new Response(body, { status: 400, headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" } });
}

export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const db = openGatewayDb(options.dbFile);
  const clock = options.clock ?? systemClock;
  const { app, store } = createGatewayApp({ ...options, db, clock, logger: options.logger ?? silentLogger });
  store.purgeExpired();
  const purge = setInterval(() => store.purgeExpired(), PURGE_INTERVAL_MS);
  purge.unref();

  const server = http.createServer(
    // connectionsCheckingInterval: how often the two timeouts are enforced (Node's default, 30 s, lets a slow client hold a socket for 45 s).
    { maxHeaderSize: 16 * 1024, requestTimeout: 120_000, headersTimeout: 15_000, keepAliveTimeout: 5_000, connectionsCheckingInterval: 2_000 },
    getRequestListener(app.fetch, { errorHandler: badRequestTarget }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 8080, options.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(purge);
        server.close(() => {
          db.close();
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
