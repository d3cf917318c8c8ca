import { getRequestListener, type Http2Bindings, type HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { silentLogger, type Logger } from "../core/logger.js";
import { systemClock, type Clock } from "./clock.js";
import type { GatewayConfig } from "./config-schema.js";
import type { HmacVerifier } from "./hmac-verifier.js";
import { ConnectionDrain, type DrainReport } from "./http/connection-drain.js";
import { answerClientError, answerConnect } from "./http/one-at-a-time.js";
import { closeConnectionsInStages } from "./http/lingering-close.js";
import { createGatewayListener, type RouteSet } from "./server.js";
import { openTokenStore } from "./state/open-store.js";

/**
 * Opens the state (a SQLite file, or PostgreSQL for several instances) and
 * listens. Header size and timeouts are bounded here for every route; body
 * limits are per route (see server.ts).
 */
export interface StartGatewayOptions {
  config: GatewayConfig;
  /** A SQLite file, or a postgres:// URL. */
  database: string;
  verifyHmac: HmacVerifier;
  port?: number;
  host?: string;
  clock?: Clock;
  routes?: RouteSet;
  logger?: Logger;
  accessLog?: boolean;
}

export interface RunningGateway {
  url: string;
  port: number;
  /** The state's location for logs (a PostgreSQL URL without its password). */
  state: string;
  /**
   * Stops accepting, lets requests in flight finish for up to `graceMs`
   * (default 0: cut them now), then closes the state. Answers an endpoint
   * held (a committed grant) are always finished first. A second call with
   * a shorter grace shortens the drain under way.
   */
  close(graceMs?: number): Promise<DrainReport>;
}

const PURGE_INTERVAL_MS = 3600 * 1000;

/** A request node-server cannot turn into a URL (backslash in the path, bad Host): our JSON 400, not a bare text one. */
function badRequestTarget(): Response {
  const body = JSON.stringify({ error: "invalid_request", error_description: "the request target or Host header is malformed" });
  return new Response(body, { status: 400, headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" } });
}

/**
 * hono answers HEAD by running the GET route and wrapping its Response in a
 * new one, so the proxy's "already sent" marker (it writes node's response
 * itself) is lost and @hono/node-server then writes a second head, fails
 * and destroys the connection: every proxied HEAD cost its keep-alive
 * connection and logged ERR_HTTP_HEADERS_SENT. A HEAD whose answer is
 * already on the wire is reported as such.
 */
function headAnswered(fetch: (request: Request, env: HttpBindings) => Response | Promise<Response>): (request: Request, env: HttpBindings | Http2Bindings) => Promise<Response> | Response {
  return (request, env) => {
    const node = env as HttpBindings;
    const answer = fetch(request, node);
    if (request.method !== "HEAD") return answer;
    return Promise.resolve(answer).then((response) => (node.outgoing.headersSent ? RESPONSE_ALREADY_SENT : response));
  };
}

export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const store = await openTokenStore(options.database, clock);
  let listener;
  try {
    listener = await createGatewayListener({ ...options, store, clock, logger }, (app) => getRequestListener(headAnswered(app.fetch), { errorHandler: badRequestTarget }));
    await store.purgeExpired();
  } catch (err) {
    await store.close();
    throw err;
  }
  const purge = setInterval(() => {
    store.purgeExpired().catch((err: unknown) => logger.warn(`gateway: purging expired state failed: ${(err as Error).message}`));
  }, PURGE_INTERVAL_MS);
  purge.unref();

  const server = http.createServer(
    // connectionsCheckingInterval: how often the two timeouts are enforced (Node's default, 30 s, lets a slow client hold a socket for 45 s).
    // requireHostHeader: false: node's own refusal of a request without Host is written outside the listener, so a
    // request pipelined behind it was handled anyway; server.ts refuses it in order (one-at-a-time.ts).
    { maxHeaderSize: 16 * 1024, requestTimeout: 120_000, headersTimeout: 15_000, keepAliveTimeout: 5_000, connectionsCheckingInterval: 2_000, requireHostHeader: false },
  );
  // A connection closed after an answer is read on until the client closes it, so no reset erases the answers (lingering-close.ts).
  closeConnectionsInStages(server);
  const drain = new ConnectionDrain(server, listener);
  // Bytes that do not parse are answered after the requests before them, never in their place (one-at-a-time.ts).
  server.on("clientError", answerClientError);
  // CONNECT (no tunnels here) likewise: 501 after the answers before it, not a connection destroyed over them.
  server.on("connect", answerConnect);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 8080, options.host ?? "127.0.0.1", () => resolve());
    });
  } catch (err) {
    clearInterval(purge);
    await store.close();
    throw err;
  }
  let closing: Promise<DrainReport> | undefined;
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    state: store.description,
    close: (graceMs = 0) => {
      clearInterval(purge);
      const drained = drain.drain(graceMs);
      closing ??= drained.then(async (report) => {
        await store.close().catch((err: unknown) => logger.warn(`gateway: closing the state failed: ${(err as Error).message}`));
        return report;
      });
      return closing;
    },
  };
}
