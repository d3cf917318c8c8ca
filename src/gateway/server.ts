import { randomBytes } from "node:crypto";
import { Hono, type Context } from "hono";
import { every } from "hono/combine";
import { secureHeaders } from "hono/secure-headers";
import { silentLogger, type Logger } from "../core/logger.js";
import { systemClock, type Clock } from "./clock.js";
import type { GatewayConfig } from "./config-schema.js";
import type { HmacVerifier } from "./hmac-verifier.js";
import { HttpError, httpErrorResponse } from "./http/http-error.js";
import type { GatewayEnv, Middleware } from "./http/middleware.js";
import { jsonResponse } from "./http/respond.js";
import { authenticate } from "./middleware/authenticate.js";
import { bearerAuth } from "./middleware/bearer-auth.js";
import { dateSkew } from "./middleware/date-skew.js";
import { hmacAuth, hmacCheck } from "./middleware/hmac-auth.js";
import { hmacFastPath } from "./middleware/hmac-fast-path.js";
import { productResolver, productRoute } from "./middleware/product-route.js";
import { productAccess } from "./middleware/scope.js";
import { signedBody } from "./middleware/signed-body.js";
import { authorizeEndpoint } from "./oauth/authorize.js";
import { ConsentSeal } from "./oauth/consent-csrf.js";
import { checkAccessToken } from "./oauth/introspect.js";
import { SignInThrottle } from "./oauth/sign-in-throttle.js";
import { tokenEndpoint } from "./oauth/token.js";
import { proxy } from "./proxy.js";
import { forwardingRules } from "./forwarded-for.js";
import { checkNoDotSegments } from "./middleware/request-target.js";
import { singleValuedCheck } from "./middleware/single-headers.js";
import type { TokenStore } from "./state/token-store.js";
import { discoveryEndpoint, METADATA_PATH, REVOKE_PATH, TOKEN_PATH } from "./oauth/discovery.js";
import { revokeEndpoint } from "./oauth/revoke.js";

/**
 * Composes the gateway as one hono app: `{auth_url}` routes (`/auth`,
 * `/auth/oauth2/token`) and product routes (`/v2/<product>/...`). `routes`
 * lets one process serve only one half (see docs/gateway.md). Routing,
 * cookies, body limits and security headers are hono's; the OAuth and HMAC
 * rules are our middleware.
 */
export type RouteSet = "all" | "auth" | "api";

export interface GatewayOptions {
  config: GatewayConfig;
  store: TokenStore;
  verifyHmac: HmacVerifier;
  clock?: Clock;
  routes?: RouteSet;
  logger?: Logger;
  /** Body limit of /auth and /auth/oauth2/token. */
  authBodyBytes?: number;
  /** One debug line per request (method, path without query, status, time). */
  accessLog?: boolean;
}

const MAX_AUTH_URL = 8 * 1024;

/** Security headers of the sign-in pages and token answers: no framing, no sniffing, no referrer, nothing loaded from elsewhere. */
const authSecureHeaders = secureHeaders({
  xFrameOptions: "DENY",
  referrerPolicy: "no-referrer",
  strictTransportSecurity: false,
  contentSecurityPolicy: { defaultSrc: ["'none'"], styleSrc: ["'unsafe-inline'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'self'"] },
});

export async function createGatewayApp(options: GatewayOptions) {
  const { config, store } = options;
  const clock = options.clock ?? systemClock;
  const routes = options.routes ?? "all";
  const logger = options.logger ?? silentLogger;
  const authBodyBytes = options.authBodyBytes ?? 16 * 1024;
  const clients = new Map(config.oauthClients.map((c) => [c.clientId, c]));
  const users = new Map(config.users.map((u) => [u.username, u]));
  const seal = new ConsentSeal(await store.persistentKey("consent_seal_key", () => randomBytes(32)));

  const forwarding = forwardingRules(config.trustedProxies);
  // RFC 8414 issuer: the configured one, else this request's own origin.
  const issuer = (c: Context<GatewayEnv>) => config.issuer ?? `${forwarding.isHttps(c.env.incoming) ? "https" : "http"}://${c.env.incoming.headers.host ?? "localhost"}`;

  const app = new Hono<GatewayEnv>();
  if (options.accessLog) app.use(accessLog(logger));
  app.use(requestGuards(clock));
  app.get("/healthz", (c) => jsonResponse(c, 200, { status: "ok" }));

  if (routes !== "api") {
    const authorize = authorizeEndpoint({ store, seal, clock, clients, users, isHttps: forwarding.isHttps, issuer, throttle: new SignInThrottle({ clock }), maxBodyBytes: authBodyBytes });
    const token = tokenEndpoint({ store, clients, maxBodyBytes: authBodyBytes });
    app.use("/auth", authSecureHeaders, maxTargetLength(MAX_AUTH_URL));
    app.use("/auth/*", authSecureHeaders, maxTargetLength(MAX_AUTH_URL));
    app.all("/auth", authorize);
    app.all(TOKEN_PATH, token);
    app.all(REVOKE_PATH, revokeEndpoint({ store, clients, maxBodyBytes: authBodyBytes }));
    app.use(METADATA_PATH, authSecureHeaders);
    app.get(METADATA_PATH, discoveryEndpoint(config, issuer));
  }

  if (routes !== "auth") {
    const resolveProduct = productResolver(config.products);
    const hmacOptions = {
      verify: options.verifyHmac,
      credentials: new Map(config.hmacCredentials.map((c) => [c.clientId, c])),
      maxSkewSeconds: config.hmac.maxSkewSeconds,
      allowDeprecatedRequestLine: config.hmac.allowDeprecatedRequestLine,
    };
    const checkHmac = hmacCheck(hmacOptions);
    const forward = proxy(forwarding);
    const hmac = every(
      dateSkew({ maxSkewSeconds: config.hmac.maxSkewSeconds }),
      signedBody({ maxBodyBytes: config.hmac.maxBodyBytes }),
      hmacAuth(hmacOptions),
    );
    app.all(
      "/v2/*",
      hmacFastPath({ resolveProduct, checkHmac, maxSkewSeconds: config.hmac.maxSkewSeconds, proxy: forward }),
      productRoute(config.products),
      authenticate({ bearer: bearerAuth({ verifyToken: (t) => checkAccessToken(store, t) }), hmac }),
      productAccess(),
      forward,
    );
  }

  app.notFound((c) => httpErrorResponse(c, new HttpError(404, "not_found", "no such route")));
  app.onError((err, c) => {
    const incoming = c.env.incoming;
    if (c.env.outgoing.headersSent) {
      c.env.outgoing.destroy();
      return new Response(null);
    }
    if (err instanceof HttpError) return httpErrorResponse(c, err);
    logger.error(`gateway: ${incoming.method} ${(incoming.url ?? "").split("?")[0]} failed: ${err instanceof Error ? err.message : String(err)}`);
    return httpErrorResponse(c, new HttpError(500, "server_error", "internal error"));
  });
  return app;
}

/**
 * What every route needs first, as one middleware (each composed
 * middleware costs hono a promise and a closure per request): the injected
 * clock read once, so every check of one request sees the same time; the
 * headers a signature or a credential covers sent at most once
 * (single-headers.ts); no dot segments in the raw path (request-target.ts).
 */
function requestGuards(clock: Clock): Middleware {
  const singleValued = singleValuedCheck();
  return (c, next) => {
    c.set("now", clock());
    singleValued(c.env.incoming);
    checkNoDotSegments(c.env.incoming);
    return next();
  };
}

function accessLog(logger: Logger): Middleware {
  return async (c, next) => {
    const started = process.hrtime.bigint();
    const { incoming, outgoing } = c.env;
    outgoing.once("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.debug(`${incoming.method} ${(incoming.url ?? "").split("?")[0]} ${outgoing.statusCode} ${ms.toFixed(1)}ms`);
    });
    await next();
  };
}

function maxTargetLength(limit: number): Middleware {
  return async (c, next) => {
    if ((c.env.incoming.url ?? "").length > limit) throw new HttpError(414, "invalid_request", `request target longer than ${limit} bytes`);
    await next();
  };
}
