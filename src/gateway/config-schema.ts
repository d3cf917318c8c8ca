import { z } from "zod";
import { parseTrustedProxy } from "./forwarded-for.js";
import { SECRET_HASH_PATTERN } from "./secret-hash.js";
import { SCOPE_TOKEN_PATTERN, scopeProduct } from "./scope-set.js";

/**
 * The gateway config file (`gateway.json`). Secrets appear only as scrypt
 * hashes, except HMAC keys: HMAC needs the raw key, so it comes from an
 * environment variable (`secretEnv`) or, for local development, inline.
 */
export const PRODUCT_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
const ID_PATTERN = /^[A-Za-z0-9._~-]{3,128}$/;

const secretHash = z.string().regex(SECRET_HASH_PATTERN, "must be a scrypt hash made by `relcast gateway hash-secret`");
const identifier = z.string().regex(ID_PATTERN, "must be 3-128 letters, digits, '.', '_', '~' or '-'");
const httpUrl = z.url({ protocol: /^https?$/, error: "must be an absolute http(s) URL" });

const oauthClient = z.strictObject({
  clientId: identifier,
  name: z.string().min(1).optional(),
  /** Absent for a public client (a native or browser app that cannot keep a secret): it authenticates by client_id alone and must use PKCE. */
  secretHash: secretHash.optional(),
  redirectUrl: httpUrl.refine((u) => !u.includes("#"), "must not contain a fragment (RFC 6749 §3.1.2)"),
  scopes: z.array(z.string().regex(SCOPE_TOKEN_PATTERN, "is not a valid scope token")).min(1, "must list at least one scope"),
});

const hmacCredential = z
  .strictObject({
    clientId: identifier,
    secret: z.string().min(16, "must be at least 16 characters").optional(),
    secretEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, "must be an environment variable name").optional(),
    company: z.string().min(1, "must not be empty"),
    product: z.string().regex(PRODUCT_NAME_PATTERN, "must be a product name from `products`"),
  })
  .refine((c) => (c.secret === undefined) !== (c.secretEnv === undefined), "needs exactly one of `secret` or `secretEnv`");

const user = z.strictObject({
  username: z.string().min(1).max(128),
  displayName: z.string().min(1).optional(),
  passwordHash: secretHash,
});

const product = z.strictObject({
  upstream: httpUrl,
  auth: z.array(z.enum(["bearer", "hmac"])).min(1).default(["bearer", "hmac"]),
  timeoutMs: z.number().int().min(100).max(600_000).default(30_000),
});

export const gatewayConfigSchema = z
  .strictObject({
    $schema: z.string().optional(),
    oauthClients: z.array(oauthClient).default([]),
    hmacCredentials: z.array(hmacCredential).default([]),
    users: z.array(user).default([]),
    issuer: httpUrl
      .refine((u) => {
        const url = new URL(u);
        return !url.search && !url.hash && !u.endsWith("/");
      }, "must be the gateway's base URL without query, fragment or trailing slash (RFC 8414 §2)")
      .optional(),
    database: z.string().min(1, "must be a SQLite file path or a postgres:// URL").optional(),
    trustedProxies: z
      .array(z.string().refine((v) => parseTrustedProxy(v) !== undefined, "must be an IP address or a CIDR range such as 10.0.0.0/8"))
      .default([]),
    products: z.record(z.string().regex(PRODUCT_NAME_PATTERN, "product names must be lower-case letters, digits and '-'"), product),
    hmac: z
      .strictObject({
        maxSkewSeconds: z.number().int().min(1).max(300).default(300),
        allowDeprecatedRequestLine: z.boolean().default(false),
        maxBodyBytes: z.number().int().min(0).max(64 * 1024 * 1024).default(1024 * 1024),
      })
      .default({ maxSkewSeconds: 300, allowDeprecatedRequestLine: false, maxBodyBytes: 1024 * 1024 }),
    /** Sign-in lockout (oauth/sign-in-throttle.ts): attempts per user name checked within the window. */
    signIn: z
      .strictObject({
        maxFailures: z.number().int().min(1).max(100).default(5),
        windowSeconds: z.number().int().min(60).max(24 * 3600).default(900),
      })
      .default({ maxFailures: 5, windowSeconds: 900 }),
    /** SIGTERM/SIGINT (start-gateway.ts): how long in-flight requests may take to finish. */
    shutdown: z
      .strictObject({
        drainSeconds: z.number().int().min(0).max(3600).default(20),
      })
      .default({ drainSeconds: 20 }),
  })
  .superRefine((config, ctx) => {
    const duplicate = (values: string[], path: (string | number)[], what: string) => {
      const seen = new Set<string>();
      values.forEach((v, i) => {
        if (seen.has(v)) ctx.addIssue({ code: "custom", path: [...path, i], message: `repeats ${what} "${v}"` });
        seen.add(v);
      });
    };
    duplicate(config.oauthClients.map((c) => c.clientId), ["oauthClients"], "clientId");
    duplicate(config.hmacCredentials.map((c) => c.clientId), ["hmacCredentials"], "clientId");
    duplicate(config.users.map((u) => u.username), ["users"], "username");
    config.hmacCredentials.forEach((c, i) => {
      if (!(c.product in config.products)) {
        ctx.addIssue({ code: "custom", path: ["hmacCredentials", i, "product"], message: `names unknown product "${c.product}"` });
      }
    });
    config.oauthClients.forEach((c, i) => {
      c.scopes.forEach((s, j) => {
        if (!(scopeProduct(s) in config.products)) {
          ctx.addIssue({ code: "custom", path: ["oauthClients", i, "scopes", j], message: `"${s}" names no product (scopes are <product> or <product>:read)` });
        }
      });
    });
  });

export type GatewayConfigInput = z.input<typeof gatewayConfigSchema>;
export type GatewayConfigFile = z.output<typeof gatewayConfigSchema>;
export type OAuthClientConfig = GatewayConfigFile["oauthClients"][number];
export type UserConfig = GatewayConfigFile["users"][number];
export type ProductConfig = GatewayConfigFile["products"][string];

/** An HMAC credential after `secretEnv` has been resolved. */
export interface HmacCredential {
  clientId: string;
  secret: string;
  company: string;
  product: string;
}

export type GatewayConfig = Omit<GatewayConfigFile, "hmacCredentials"> & {
  hmacCredentials: HmacCredential[];
  source: string;
};
