import pg from "pg";
import { redactUrl } from "../../core/redact-url.js";
import { RelcastError } from "../../core/errors.js";
import { registerSecret } from "../../core/secrets.js";
import { MIGRATIONS, migrationSql } from "./migrations.js";
import type { Row, SqlDriver, SqlRunner, SqlValue } from "./sql-driver.js";

/**
 * Shared state for several gateway instances: one PostgreSQL database.
 * Transactions run at READ COMMITTED; the grants lock the rows they decide
 * on (`SELECT … FOR UPDATE`), so of two instances racing for one code or
 * refresh token the second waits, then sees the first one's decision. The
 * migrations are the SQLite ones (same list, same versions), applied under
 * an advisory lock so instances starting together do not race.
 */
const MIGRATION_LOCK = 0x72656c63; // "relc"

export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** The URL without its password (or query, which can carry one), for logs. */
export function describePostgresUrl(url: string): string {
  try {
    new URL(url);
    return redactUrl(url);
  } catch {
    return "postgres://(unparsable URL)";
  }
}

function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

function runner(query: (text: string, values: readonly SqlValue[]) => Promise<pg.QueryResult>): SqlRunner {
  return {
    all: async (sql, params = []) => (await query(numbered(sql), params)).rows as Row[],
    run: async (sql, params = []) => (await query(numbered(sql), params)).rowCount ?? 0,
  };
}

export async function openPostgresDriver(url: string): Promise<SqlDriver> {
  const password = (() => {
    try {
      return decodeURIComponent(new URL(url).password);
    } catch {
      return "";
    }
  })();
  if (password) registerSecret(password);
  const description = describePostgresUrl(url);
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 10_000 });
  // An idle connection that breaks (server restart) must not crash the process; the next query reconnects.
  pool.on("error", () => undefined);
  try {
    await migrate(pool);
  } catch (err) {
    await pool.end().catch(() => undefined);
    if (err instanceof RelcastError) throw err;
    throw new RelcastError("E_CONFIG", `cannot use gateway database ${description}: ${(err as Error).message}`, "check the postgres:// URL, that the server runs and that the user may create tables");
  }
  return {
    dialect: "postgres",
    lockRows: " FOR UPDATE",
    description,
    ...runner((text, values) => pool.query(text, values as SqlValue[])),
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const result = await fn(runner((text, values) => client.query(text, values as SqlValue[])));
        await client.query("COMMIT");
        return result;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await client.query("CREATE TABLE IF NOT EXISTS relcast_schema (version INTEGER NOT NULL)");
    const rows = (await client.query("SELECT version FROM relcast_schema")).rows as { version: number }[];
    if (rows.length === 0) await client.query("INSERT INTO relcast_schema (version) VALUES (0)");
    const current = rows[0]?.version ?? 0;
    if (current > MIGRATIONS.length) {
      throw new RelcastError(
        "E_CONFIG",
        `gateway database schema version ${current} is newer than this relcast knows (${MIGRATIONS.length})`,
        "upgrade relcast or point --db at another database",
      );
    }
    for (let version = current; version < MIGRATIONS.length; version++) {
      await client.query(migrationSql(version, "postgres"));
      await client.query("UPDATE relcast_schema SET version = $1", [version + 1]);
    }
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
