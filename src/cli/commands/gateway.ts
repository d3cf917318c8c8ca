import path from "node:path";
import { InvalidArgumentError, type Command } from "commander";
import { RelcastError } from "../../core/errors.js";
import { createLogger } from "../../core/logger.js";
import { kitVerifier } from "../../gateway/hmac-kit.js";
import { unpinnedIssuerWarning } from "../../gateway/oauth/issuer-warning.js";
import { loadGatewayConfig } from "../../gateway/load-gateway-config.js";
import { hashSecret } from "../../gateway/secret-hash.js";
import type { RouteSet } from "../../gateway/server.js";
import { startGateway } from "../../gateway/start-gateway.js";
import { isPostgresUrl } from "../../gateway/state/postgres-driver.js";
import { readStdin } from "../../core/read-stdin.js";

/**
 * `relcast gateway --config <gateway.json>` runs the reference gateway until
 * SIGINT/SIGTERM; `relcast gateway hash-secret` turns a secret read from
 * stdin into the scrypt hash the config expects.
 */
interface GatewayFlags {
  config?: string;
  port: number;
  host: string;
  db?: string;
  routes: RouteSet;
  accessLog?: boolean;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError("must be a port number 0-65535");
  return port;
}

function parseRoutes(value: string): RouteSet {
  if (value !== "all" && value !== "auth" && value !== "api") throw new InvalidArgumentError("must be all, auth or api");
  return value;
}

async function runGateway(flags: GatewayFlags, debug: boolean): Promise<void> {
  const logger = createLogger({ debug: debug || flags.accessLog === true });
  if (!flags.config) throw new RelcastError("E_USAGE", "relcast gateway needs --config <gateway.json>", "see examples/gateway.json and docs/gateway.md");
  const config = await loadGatewayConfig(flags.config);
  const unpinned = unpinnedIssuerWarning({ issuer: config.issuer, host: flags.host, servesAuth: flags.routes !== "api", source: config.source });
  if (unpinned) logger.warn(unpinned);
  const database = stateLocation(flags.db, config.database, config.source);
  const gateway = await startGateway({ config, database, verifyHmac: kitVerifier, port: flags.port, host: flags.host, routes: flags.routes, logger, accessLog: flags.accessLog === true }).catch(
    (err: NodeJS.ErrnoException) => {
      if (err.code === "EADDRINUSE" || err.code === "EACCES" || err.code === "EADDRNOTAVAIL") {
        throw new RelcastError("E_NETWORK", `cannot listen on ${flags.host}:${flags.port} (${err.code})`, "pick another --port or --host");
      }
      throw err;
    },
  );
  logger.info(`relcast gateway listening on ${gateway.url} (routes: ${flags.routes}, state: ${gateway.state})`);
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info(`relcast gateway: ${signal}, closing`);
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      void gateway.close().then(resolve);
    };
    const onInt = () => stop("SIGINT");
    const onTerm = () => stop("SIGTERM");
    process.on("SIGINT", onInt);
    process.on("SIGTERM", onTerm);
  });
}

/**
 * `--db` (a file relative to the working folder), else the config's
 * `database` (relative to the config), else gateway-state.sqlite next to the
 * config. A postgres:// URL is used as given.
 */
function stateLocation(flag: string | undefined, fromConfig: string | undefined, configFile: string): string {
  if (flag) return isPostgresUrl(flag) ? flag : path.resolve(flag);
  if (fromConfig) return isPostgresUrl(fromConfig) ? fromConfig : path.resolve(path.dirname(configFile), fromConfig);
  return path.join(path.dirname(configFile), "gateway-state.sqlite");
}

export function registerGateway(program: Command): void {
  const gateway = program
    .command("gateway")
    .description("run the reference API gateway: OAuth 2.0 authorization server, Bearer and HMAC authentication, product proxy")
    .option("--config <file>", "gateway config, required (see docs/gateway.md)")
    .option("--port <port>", "TCP port (0 picks a free one)", parsePort, 8080)
    .option("--host <address>", "address to listen on", "127.0.0.1")
    .option("--db <file|url>", "state: a SQLite file, or a postgres:// URL to share it between instances (default: config `database`, else gateway-state.sqlite next to the config)")
    .option("--routes <set>", "serve all routes, only the auth routes, or only the product api routes", parseRoutes, "all" as RouteSet)
    .option("--access-log", "log one line per request to stderr (never query strings or credentials)")
    .action(async (flags: GatewayFlags) => {
      await runGateway(flags, program.opts<{ debug?: boolean }>().debug === true);
    });

  gateway
    .command("hash-secret")
    .description("read a client secret or password on stdin and print its scrypt hash for gateway.json")
    .action(async () => {
      const secret = (await readStdin()).replace(/\r?\n$/, "");
      if (secret.length < 8) throw new RelcastError("E_INPUT", "the secret on stdin is shorter than 8 characters", "pipe the secret in: printf %s \"$SECRET\" | relcast gateway hash-secret");
      process.stdout.write((await hashSecret(secret)) + "\n");
    });
}
