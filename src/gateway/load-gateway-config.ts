import { readFile } from "node:fs/promises";
import path from "node:path";
import { RelcastError } from "../core/errors.js";
import { registerSecret } from "../core/secrets.js";
import { describeZodIssues } from "../core/zod-message.js";
import { gatewayConfigSchema, type GatewayConfig, type HmacCredential } from "./config-schema.js";

/**
 * Reads `gateway.json`, validates it with zod and resolves HMAC keys from the
 * environment. Every problem is an E_CONFIG naming the field and the file.
 */
export async function loadGatewayConfig(file: string, env: NodeJS.ProcessEnv = process.env): Promise<GatewayConfig> {
  const source = path.resolve(file);
  let text: string;
  try {
    text = await readFile(source, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new RelcastError(
      "E_CONFIG",
      code === "ENOENT" ? `gateway config not found: ${source}` : `cannot read gateway config ${source} (${code})`,
      "pass --config <gateway.json>; see docs/gateway.md and examples/gateway.json",
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new RelcastError("E_CONFIG", `${source} is not valid JSON: ${(err as Error).message}`, "fix the JSON syntax of the gateway config");
  }
  return parseGatewayConfig(raw, source, env);
}

export function parseGatewayConfig(raw: unknown, source: string, env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const parsed = gatewayConfigSchema.safeParse(raw);
  if (!parsed.success) {
    throw new RelcastError("E_CONFIG", describeZodIssues(parsed.error, source, undefined, gatewayConfigSchema), "fix the field named above; see docs/gateway.md");
  }
  const hmacCredentials = parsed.data.hmacCredentials.map((c, i): HmacCredential => {
    const secret = c.secret ?? env[c.secretEnv ?? ""];
    if (!secret) {
      throw new RelcastError(
        "E_CONFIG",
        `${source}: field "hmacCredentials.${i}.secretEnv": environment variable ${c.secretEnv} is not set`,
        `export ${c.secretEnv}=<the HMAC key> before starting the gateway`,
      );
    }
    if (secret.length < 16) {
      throw new RelcastError("E_CONFIG", `${source}: field "hmacCredentials.${i}.secretEnv": key is shorter than 16 characters`, "issue a longer HMAC key");
    }
    registerSecret(secret);
    return { clientId: c.clientId, secret, company: c.company, product: c.product };
  });
  return { ...parsed.data, hmacCredentials, source };
}
