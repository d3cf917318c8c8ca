import type Database from "better-sqlite3";
import { RelcastError } from "../../core/errors.js";
import { MIGRATIONS, migrationSql } from "./migrations.js";
import { Serial, type Row, type SqlDriver, type SqlRunner, type SqlValue } from "./sql-driver.js";

/**
 * The embedded default: one SQLite file. WAL lets an auth process and a
 * product process share it; busy_timeout makes their writes wait for each
 * other. better-sqlite3 is synchronous, so a transaction that awaits between
 * statements is kept alone in this process by a queue (every write waits its
 * turn) and against other processes by BEGIN IMMEDIATE.
 *
 * better-sqlite3 is native code and only the gateway needs it, so it is an
 * optional peer dependency, loaded here and nowhere else: installing relcast to
 * publish compiles nothing (docs/gateway.md, "The database driver").
 */
export async function openSqliteDriver(file: string): Promise<SqlDriver> {
  const Sqlite = await loadBetterSqlite3();
  let db: Database.Database;
  try {
    db = new Sqlite(file);
  } catch (err) {
    throw sqliteOpenError(file, err);
  }
  if (file !== ":memory:") db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  db.pragma("synchronous = NORMAL");
  migrate(db);

  const statements = new Map<string, Database.Statement>();
  const prepare = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = db.prepare(sql)));
    return statement;
  };
  const direct: SqlRunner = {
    all: async (sql, params = []) => prepare(sql).all(...(params as SqlValue[])) as Row[],
    run: async (sql, params = []) => prepare(sql).run(...(params as SqlValue[])).changes,
  };
  const writes = new Serial();
  return {
    dialect: "sqlite",
    lockRows: "",
    description: file,
    all: direct.all,
    run: (sql, params) => writes.run(() => direct.run(sql, params)),
    transaction: (fn) =>
      writes.run(async () => {
        db.exec("BEGIN IMMEDIATE");
        try {
          const result = await fn(direct);
          db.exec("COMMIT");
          return result;
        } catch (err) {
          if (db.inTransaction) db.exec("ROLLBACK");
          throw err;
        }
      }),
    close: async () => {
      await writes.run(async () => db.close());
    },
  };
}

async function loadBetterSqlite3(): Promise<typeof Database> {
  try {
    return (await import("better-sqlite3")).default;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const missing = code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND";
    throw new RelcastError(
      "E_CONFIG",
      missing
        ? "the gateway's SQLite state needs the better-sqlite3 package, which is not installed (relcast never installs it: it is native code only the gateway needs)"
        : `better-sqlite3 is installed but cannot be loaded: ${(err as Error).message}`,
      missing
        ? "install it next to relcast (npm install better-sqlite3), or keep the state in PostgreSQL: --db postgres://user@host/db"
        : "reinstall it for this Node version (npm rebuild better-sqlite3), or keep the state in PostgreSQL: --db postgres://user@host/db",
      { cause: err },
    );
  }
}

/** better-sqlite3's native part not built or built for another Node: its JavaScript loads, opening a file then fails. */
function isNativeLoadFailure(err: unknown): boolean {
  const e = err as NodeJS.ErrnoException | undefined;
  return e?.code === "ERR_DLOPEN_FAILED" || /Could not locate the bindings file|NODE_MODULE_VERSION|compiled against a different Node\.js version|invalid ELF header|wrong ELF class|not a mach-o file|dlopen/i.test(e?.message ?? "");
}

/** Why `new Database(file)` failed, with the fix that applies: a broken install is not a folder problem. */
export function sqliteOpenError(file: string, err: unknown): RelcastError {
  const said = (err as Error)?.message ?? String(err);
  if (isNativeLoadFailure(err)) {
    return new RelcastError(
      "E_CONFIG",
      `better-sqlite3 is installed but its native part cannot be loaded for this Node ${process.version} (${said.split("\n")[0]})`,
      "build it for this Node: npm rebuild better-sqlite3 (needs a C++ toolchain unless a prebuilt binary exists), or keep the state in PostgreSQL: --db postgres://user@host/db",
      { cause: err },
    );
  }
  return new RelcastError("E_CONFIG", `cannot open gateway database ${file}: ${said}`, "pass --db <file> in a writable folder, or a postgres:// URL", { cause: err });
}

function migrate(db: Database.Database): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new RelcastError(
      "E_CONFIG",
      `gateway database schema version ${current} is newer than this relcast knows (${MIGRATIONS.length})`,
      "upgrade relcast or point --db at another file",
    );
  }
  for (let version = current; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      db.exec(migrationSql(version, "sqlite"));
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
}
