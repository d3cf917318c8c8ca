import { postgresBinDir, startPostgresServer, type PostgresServer } from "../../scripts/postgres-server.mjs";

/**
 * A throwaway PostgreSQL server for tests (scripts/postgres-server.mjs,
 * shared with the gateway benchmark): started on a temp data folder and a
 * free 127.0.0.1 port; stop() ends exactly its pid and removes the folder.
 */
export { startPostgresServer, type PostgresServer };

/**
 * Whether PostgreSQL can run here. Under CI=true a missing server is a
 * failure (thrown); elsewhere the reason is returned so tests skip saying why.
 */
export function postgresUnavailableReason(): string | undefined {
  const reason = postgresBinDir() ? undefined : "PostgreSQL is not installed (initdb/postgres not found); install it with `apt-get install -y postgresql`";
  if (reason && process.env.CI === "true") throw new Error(`CI=true and ${reason}`);
  return reason;
}
