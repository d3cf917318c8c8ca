import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { silentLogger, type Logger } from "../core/logger.js";
import { systemClock, type Clock } from "./clock.js";
import type { GatewayConfig } from "./config-schema.js";
import type { HmacVerifier } from "./hmac-verifier.js";
import { HttpError, sendHttpError } from "./http/http-error.js";
import { compose, type GatewayContext } from "./http/middleware.js";
import { sendJson } from "./http/respond.js";
import { authenticate } from "./middleware/authenticate.js";
import { bearerAuth } from "./middleware/bearer-auth.js";
import { dateSkew } from "./middleware/date-skew.js";
import { hmacAuth } from "./middleware/hmac-auth.js";
import { productRoute } from "./middleware/product-route.js";
import { productAccess } from "./middleware/scope.js";
import { signedBody } from "./middleware/signed-body.js";
import { authorizeEndpoint } from "./oauth/authorize.js";
import { ConsentSeal } from "./oauth/consent-csrf.js";
import { SignInThrottle } from "./oauth/sign-in-throttle.js";
import { checkAccessToken } from "./oauth/introspect.js";
import { tokenEndpoint } from "./oauth/token.js";
import { proxy } from "./proxy.js";
import { persistentKey, type GatewayDb } from "./state/db.js";
import { TokenStore } from "./state/token-store.js";

/**
 * Composes the gateway: `{auth_url}` routes (`/auth`, `/auth/oauth2/token`)
 * and product routes (`/v2/<product>/...`) in one request handler. `routes`
 * lets one process serve only one half (see docs/gateway.md).
 */
export type RouteSet = "all" | "auth" | "api";

export interface GatewayOptions {
  config: GatewayConfig;
  db: GatewayDb;
  verifyHmac: HmacVerifier;
  clock?: Clock;
  routes?: RouteSet;
  logger?: Logger;
  /** Body limit of /auth and /auth/oauth2/token. */
  authBodyBytes?: number;
}

const MAX_AUTH_URL = 8 * 1024;

export function createGatewayHandler(options: GatewayOptions) {
  const { config, db } = options;
  const clock = options.clock ?? systemClock;
  const routes = options.routes ?? "all";
  const logger = options.logger ?? silentLogger;
  const authBodyBytes = options.authBodyBytes ?? 16 * 1024;
  const store = new TokenStore(db, clock);
  const clients = new Map(config.oauthClients.map((c) => [c.clientId, c]));
  const users = new Map(config.users.map((u) => [u.username, u]));
  const seal = new ConsentSeal(persistentKey(db, "consent_seal_key", () => randomBytes(32)));

  const authorize = authorizeEndpoint({ store, seal, clock, clients, users, throttle: new SignInThrottle({ clock }), maxBodyBytes: authBodyBytes });
  const token = tokenEndpoint({ store, clients, maxBodyBytes: authBodyBytes });
  const products = compose([
    productRoute(config.products),
    authenticate({
      bearer: bearerAuth({ verifyToken: (t) => checkAccessToken(store, t) }),
      hmac: compose([
        dateSkew({ maxSkewSeconds: config.hmac.maxSkewSeconds }),
        signedBody({ maxBodyBytes: config.hmac.maxBodyBytes }),
        hmacAuth({
          verify: options.verifyHmac,
          credentials: new Map(config.hmacCredentials.map((c) => [c.clientId, c])),
          maxSkewSeconds: config.hmac.maxSkewSeconds,
          allowDeprecatedRequestLine: config.hmac.allowDeprecatedRequestLine,
        }),
      ]),
    }),
    productAccess(),
    proxy(),
  ]);

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = req.url ?? "/";
    const q = target.indexOf("?");
    const path = q < 0 ? target : target.slice(0, q);
    if (path === "/healthz") return sendJson(res, 200, { status: "ok" });
    if (routes !== "api" && (path === "/auth" || path === "/auth/oauth2/token")) {
      if (target.length > MAX_AUTH_URL) throw new HttpError(414, "invalid_request", `request target longer than ${MAX_AUTH_URL} bytes`);
      if (path === "/auth/oauth2/token") return token(req, res);
      return authorize(req, res, new URLSearchParams(q < 0 ? "" : target.slice(q + 1)));
    }
    if (routes !== "auth" && path.startsWith("/v2/")) {
      const ctx: GatewayContext = { req, res, now: clock() };
      return products(ctx, async () => {});
    }
    throw new HttpError(404, "not_found", "no such route");
  }

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.debug(`${req.method} ${(req.url ?? "").split("?")[0]} ${res.statusCode} ${ms.toFixed(1)}ms`);
    });
    route(req, res).catch((err: unknown) => {
      if (err instanceof HttpError) {
        if (!req.complete) req.resume();
        return sendHttpError(res, err);
      }
      logger.error(`gateway: ${req.method} ${(req.url ?? "").split("?")[0]} failed: ${err instanceof Error ? err.message : String(err)}`);
      sendHttpError(res, new HttpError(500, "server_error", "internal error"));
    });
  };
  return { handler, store };
}
