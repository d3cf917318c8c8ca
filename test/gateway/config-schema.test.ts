import { describe, expect, it } from "vitest";
import { RelcastError } from "../../src/core/errors.js";
import { parseGatewayConfig } from "../../src/gateway/load-gateway-config.js";

const hash = "scrypt$16384$8$1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g=";
const base = () => ({
  oauthClients: [{ clientId: "app-one", secretHash: hash, redirectUrl: "https://app/cb", scopes: ["crm"] }],
  hmacCredentials: [{ clientId: "h-one", secretEnv: "H_ONE_KEY", company: "acme", product: "crm" }],
  users: [{ username: "alice", passwordHash: hash }],
  products: { crm: { upstream: "http://127.0.0.1:9000" } },
});

function message(raw: unknown, env: NodeJS.ProcessEnv = { H_ONE_KEY: "k".repeat(20) }): string {
  try {
    parseGatewayConfig(raw, "gateway.json", env);
  } catch (err) {
    expect(err).toBeInstanceOf(RelcastError);
    expect((err as RelcastError).code).toBe("E_CONFIG");
    return (err as RelcastError).message;
  }
  throw new Error("config was accepted");
}

describe("gateway config", () => {
  it("accepts a valid config, applies defaults and resolves HMAC keys from the environment", () => {
    const config = parseGatewayConfig(base(), "gateway.json", { H_ONE_KEY: "k".repeat(20) });
    expect(config.hmacCredentials[0]?.secret).toBe("k".repeat(20));
    expect(config.products.crm?.auth).toEqual(["bearer", "hmac"]);
    expect(config.hmac).toEqual({ maxSkewSeconds: 300, allowDeprecatedRequestLine: false, maxBodyBytes: 1024 * 1024 });
  });

  it("names the file and the field of each problem", () => {
    const c = base();
    c.oauthClients[0]!.secretHash = "plain-secret";
    expect(message(c)).toBe('gateway.json: field "oauthClients.0.secretHash" must be a scrypt hash made by `relcast gateway hash-secret`');
    const d = base();
    d.hmacCredentials[0]!.product = "billing";
    expect(message(d)).toContain('field "hmacCredentials.0.product" names unknown product "billing"');
    const e = base();
    e.oauthClients[0]!.scopes = ["hr:read"];
    expect(message(e)).toContain('field "oauthClients.0.scopes.0"');
    expect(message({ ...base(), extra: 1 })).toContain('unknown field "extra"');
    expect(message(base(), {})).toContain("environment variable H_ONE_KEY is not set");
    const f = base();
    f.oauthClients[0]!.redirectUrl = "https://app/cb#frag";
    expect(message(f)).toContain("must not contain a fragment");
  });

  it("takes public clients, trusted proxies, an issuer and a database location, and checks each", () => {
    const env = { H_ONE_KEY: "k".repeat(20) };
    const ok = {
      ...base(),
      oauthClients: [{ clientId: "native-app", redirectUrl: "http://127.0.0.1:7/cb", scopes: ["crm"] }],
      trustedProxies: ["10.0.0.0/8", "127.0.0.1", "::1", "fd00::/8"],
      issuer: "https://auth.example.com",
      database: "postgres://relcast@db.internal/relcast",
    };
    const config = parseGatewayConfig(ok, "gateway.json", env);
    expect(config.oauthClients[0]?.secretHash).toBeUndefined();
    expect(config.trustedProxies).toHaveLength(4);
    expect(parseGatewayConfig(base(), "gateway.json", env).trustedProxies).toEqual([]);
    for (const bad of ["10.0.0.0/33", "example.com", "10.0.0.1/8/1", "::1/129"]) {
      expect(message({ ...base(), trustedProxies: [bad] })).toContain('field "trustedProxies.0" must be an IP address or a CIDR range');
    }
    for (const bad of ["https://auth.example.com/", "https://auth.example.com?x=1", "ftp://auth"]) {
      expect(message({ ...base(), issuer: bad })).toContain('field "issuer"');
    }
  });
});
