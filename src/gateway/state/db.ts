import Database from "better-sqlite3";
import { RelcastError } from "../../core/errors.js";
import { MIGRATIONS } from "./migrations.js";

export type GatewayDb = Database.Database;

/**
 * Opens (or creates) the gateway state file. WAL lets an auth process and a
 * product process share one file; busy_timeout makes their writes wait for
 * each other instead of failing.
 */
export function openGatewayDb(file: string): GatewayDb {
  let db: GatewayDb;
  try {
    db = new Database(file);
  } catch (err) {
    throw new RelcastError("E_CONFIG", `cannot open gateway database ${file}: ${(err as Error).message}`, "pass --db <file> in a writable folder");
  }
  if (file !== ":memory:") db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  db.pragma("synchronous = NORMAL");
  migrate(db);
  return db;
}

export function migrate(db: GatewayDb): void {
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
      db.exec(MIGRATIONS[version]!);
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
}

/** A random key kept in the database, created on first use (consent-form signing key). */
export function persistentKey(db: GatewayDb, name: string, create: () => Buffer): Buffer {
  db.prepare("INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)").run(name, create());
  const row = db.prepare("SELECT value FROM settings WHERE key = ?").get(name) as { value: Buffer };
  return row.value;
}
