import { randomBytes } from "node:crypto";
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { Hono, type Context } from "hono";
import { every } from "hono/combine";
import { secureHeaders } from "hono/secure-headers";
import { silentLogger, type Logger } from "../core/logger.js";
import { systemClock, type Clock } from "./clock.js";
import type { GatewayConfig } from "./config-schema.js";
import type { HmacVerifier } from "./hmac-verifier.js";
import { HttpError, httpErrorResponse, writeHttpError } from "./http/http-error.js";
import type { GatewayEnv, Middleware } from "./http/middleware.js";
import { oneRequestAtATime } from "./http/one-at-a-time.js";
import { closeAfterUpgradeAsk } from "./http/upgrade-asked.js";
import { jsonResponse } from "./http/respond.js";
import { authenticate } from "./middleware/authenticate.js";
import { bearerAuth } from "./middleware/bearer-auth.js";
import { dateSkew } from "./middleware/date-skew.js";
import { hmacAuth, hmacCheck } from "./middleware/hmac-auth.js";
import { hmacFastPath, type HmacFastPathOptions } from "./hmac-fast-path.js";
import { productResolver, productRoute } from "./middleware/product-route.js";
import { replayGuard } from "./middleware/replay-guard.js";
import { productAccess } from "./middleware/scope.js";
import { signedBody } from "./middleware/signed-body.js";
import { authorizeEndpoint } from "./oauth/authorize.js";
import { ConsentSeal } from "./oauth/consent-csrf.js";
import { checkAccessToken } from "./oauth/introspect.js";
import { SignInThrottle } from "./oauth/sign-in-throttle.js";
import { tokenEndpoint } from "./oauth/token.js";
import { proxy, upstreamForwarder } from "./proxy.js";
import { forwardingRules } from "./forwarded-for.js";
import { checkNoDotSegments } from "./middleware/request-target.js";
import { checkConnectionHeader } from "./middleware/connection-header.js";
import { checkTransferCoding } from "./middleware/transfer-coding.js";
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

/** The hono app (routing, middleware composition, error answers) alone. */
export async function createGatewayApp(options: GatewayOptions): Promise<Hono<GatewayEnv>> {
  return (await buildGateway(options)).app;
}

/**
 * node's request listener for the whole gateway: the HMAC fast path
 * (hmac-fast-path.ts) in front of hono's, when product routes are served,
 * taking the requests of one connection one at a time (one-at-a-time.ts),
 * closing a connection after a request that asks to upgrade it
 * (upgrade-asked.ts).
 * `adapter` makes hono's listener (start-gateway.ts: @hono/node-server's,
 * with its answer to a malformed request target).
 */
export async function createGatewayListener(options: GatewayOptions, adapter: (app: Hono<GatewayEnv>) => RequestListener): Promise<RequestListener> {
  const { app, fastPath } = await buildGateway(options);
  const general = adapter(app);
  return oneRequestAtATime(closeAfterUpgradeAsk(requireHost(fastPath ? hmacFastPath(fastPath, general) : general)));
}

const NO_HOST = new HttpError(400, "invalid_request", "an HTTP/1.1 request needs a Host header (RFC 9112 §3.2); send it", { connection: "close" });

/** HTTP/1.1 requires Host: refused here, in order with the connection's other answers (node's own refusal is not). */
function requireHost(listener: RequestListener): RequestListener {
  return (req, res) => {
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) return writeHttpError(res, NO_HOST);
    listener(req, res);
  };
}

async function buildGateway(options: GatewayOptions): Promise<{ app: Hono<GatewayEnv>; fastPath?: HmacFastPathOptions }> {
  const { config, store } = options;
  const clock = options.clock ?? systemClock;
  const routes = options.routes ?? "all";
  const logger = options.logger ?? silentLogger;
  const authBodyBytes = options.authBodyBytes ?? 16 * 1024;
  const clients = new Map(config.oauthClients.map((c) => [c.clientId, c]));
  const users = new Map(config.users.map((u) => [u.username, u]));
  const seal = new ConsentSeal(await store.persistentKey("consent_seal_key", () => randomBytes(32)));
  const throttle = new SignInThrottle({
    store,
    users: new Set(users.keys()),
    key: await store.persistentKey("sign_in_key", () => randomBytes(32)),
    maxFailures: config.signIn.maxFailures,
    windowSeconds: config.signIn.windowSeconds,
  });

  const forwarding = forwardingRules(config.trustedProxies);
  // RFC 8414 issuer: the configured one, else this request's own origin.
  const issuer = (c: Context<GatewayEnv>) => config.issuer ?? `${forwarding.isHttps(c.env.incoming) ? "https" : "http"}://${c.env.incoming.headers.host ?? "localhost"}`;

  const app = new Hono<GatewayEnv>();
  const logRequest = options.accessLog ? logWhenFinished(logger) : undefined;
  if (logRequest) app.use(accessLog(logRequest));
  const checks = requestChecks();
  app.use(requestGuards(clock, checks));
  app.get("/healthz", (c) => jsonResponse(c, 200, { status: "ok" }));

  if (routes !== "api") {
    const authorize = authorizeEndpoint({ store, seal, clock, clients, users, isHttps: forwarding.isHttps, issuer, throttle, maxBodyBytes: authBodyBytes });
    const token = tokenEndpoint({ store, clients, maxBodyBytes: authBodyBytes });
    app.use("/auth", authSecureHeaders, maxTargetLength(MAX_AUTH_URL));
    app.use("/auth/*", authSecureHeaders, maxTargetLength(MAX_AUTH_URL));
    app.all("/auth", authorize);
    app.all(TOKEN_PATH, token);
    app.all(REVOKE_PATH, revokeEndpoint({ store, clients, maxBodyBytes: authBodyBytes }));
    app.use(METADATA_PATH, authSecureHeaders);
    app.get(METADATA_PATH, discoveryEndpoint(config, issuer));
  }

  let fastPath: HmacFastPathOptions | undefined;
  if (routes !== "auth") {
    const hmacOptions = {
      verify: options.verifyHmac,
      credentials: new Map(config.hmacCredentials.map((c) => [c.clientId, c])),
      maxSkewSeconds: config.hmac.maxSkewSeconds,
      allowDeprecatedRequestLine: config.hmac.allowDeprecatedRequestLine,
    };
    const forward = upstreamForwarder(forwarding, Object.values(config.products).map((p) => p.timeoutMs));
    fastPath = {
      clock,
      requestChecks: checks,
      resolveProduct: productResolver(config.products),
      maxSkewSeconds: config.hmac.maxSkewSeconds,
      checkHmac: hmacCheck(hmacOptions),
      forward,
      logRequest,
      answerError: (incoming, outgoing, err) => {
        if (outgoing.headersSent) outgoing.destroy();
        else writeHttpError(outgoing, asHttpError(incoming, err));
      },
    };
    const hmac = every(
      dateSkew({ maxSkewSeconds: config.hmac.maxSkewSeconds }),
      signedBody({ maxBodyBytes: config.hmac.maxBodyBytes }),
      hmacAuth(hmacOptions),
    );
    app.all(
      "/v2/*",
      productRoute(config.products),
      authenticate({ bearer: bearerAuth({ verifyToken: (t) => checkAccessToken(store, t) }), hmac }),
      productAccess(),
      replayGuard({ signatures: store.signatures, maxSkewSeconds: config.hmac.maxSkewSeconds }),
      proxy(forward),
    );
  }

  app.notFound((c) => httpErrorResponse(c, new HttpError(404, "not_found", "no such route")));
  app.onError((err, c) => {
    const incoming = c.env.incoming;
    if (c.env.outgoing.headersSent) {
      c.env.outgoing.destroy();
      return new Response(null);
    }
    return httpErrorResponse(c, asHttpError(incoming, err));
  });
  return { app, fastPath };

  /** The answer to a failure: an HttpError as it is; anything else is logged and answered 500. */
  function asHttpError(incoming: IncomingMessage, err: unknown): HttpError {
    if (err instanceof HttpError) return err;
    logger.error(`gateway: ${incoming.method} ${(incoming.url ?? "").split("?")[0]} failed: ${err instanceof Error ? err.message : String(err)}`);
    return new HttpError(500, "server_error", "internal error");
  }
}

/**
 * What every route needs first, as one middleware (each composed
 * middleware costs hono a promise and a closure per request): the injected
 * clock read once, so every check of one request sees the same time, and
 * the request checks below.
 */
function requestGuards(clock: Clock, checks: (incoming: IncomingMessage) => void): Middleware {
  return (c, next) => {
    c.set("now", clock());
    checks(c.env.incoming);
    return next();
  };
}

/**
 * The checks of every request, on node's request (the HMAC fast path runs
 * them too): the headers a signature or a credential covers sent at most
 * once (single-headers.ts); no framing or authentication header named in
 * `Connection` (connection-header.ts); no transfer coding but chunked
 * (transfer-coding.ts); no dot segments in the raw path
 * (request-target.ts).
 */
function requestChecks(): (incoming: IncomingMessage) => void {
  const singleValued = singleValuedCheck();
  return (incoming) => {
    singleValued(incoming);
    checkConnectionHeader(incoming);
    checkTransferCoding(incoming);
    checkNoDotSegments(incoming);
  };
}

function accessLog(logRequest: (incoming: IncomingMessage, outgoing: ServerResponse) => void): Middleware {
  return async (c, next) => {
    logRequest(c.env.incoming, c.env.outgoing);
    await next();
  };
}

/** One debug line when the answer is finished: method, path without query, status, time. */
function logWhenFinished(logger: Logger): (incoming: IncomingMessage, outgoing: ServerResponse) => void {
  return (incoming, outgoing) => {
    const started = process.hrtime.bigint();
    outgoing.once("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.debug(`${incoming.method} ${(incoming.url ?? "").split("?")[0]} ${outgoing.statusCode} ${ms.toFixed(1)}ms`);
    });
  };
}

function maxTargetLength(limit: number): Middleware {
  return async (c, next) => {
    if ((c.env.incoming.url ?? "").length > limit) throw new HttpError(414, "invalid_request", `request target longer than ${limit} bytes`);
    await next();
  };
}
