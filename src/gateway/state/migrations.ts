/**
 * Schema of the gateway's state, as one append-only list for both
 * databases: entry i moves the database from version i to i+1 (SQLite
 * `user_version`, PostgreSQL table `relcast_schema`). An entry is written
 * once; the few column types that differ between the dialects come from
 * `t` (Unix-millisecond times: SQLite INTEGER, PostgreSQL BIGINT; bytes:
 * BLOB, BYTEA). Never edit an entry that has shipped; add a new one.
 *
 * Times are Unix milliseconds. Codes and tokens appear only as SHA-256 hex.
 */
export type Dialect = "sqlite" | "postgres";

interface ColumnTypes {
  /** A Unix-millisecond time (beyond PostgreSQL's 32-bit INTEGER). */
  int64: string;
  bytes: string;
}

const TYPES: Record<Dialect, ColumnTypes> = {
  sqlite: { int64: "INTEGER", bytes: "BLOB" },
  postgres: { int64: "BIGINT", bytes: "BYTEA" },
};

export type Migration = (t: ColumnTypes) => string;

export const MIGRATIONS: readonly Migration[] = [
  (t) => `
  CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value ${t.bytes} NOT NULL
  );
  CREATE TABLE token_families (
    id             TEXT PRIMARY KEY,
    client_id      TEXT NOT NULL,
    username       TEXT NOT NULL,
    scope          TEXT NOT NULL,
    created_at     ${t.int64} NOT NULL,
    revoked_at     ${t.int64},
    revoked_reason TEXT
  );
  CREATE TABLE auth_codes (
    code_hash     TEXT PRIMARY KEY,
    client_id     TEXT NOT NULL,
    username      TEXT NOT NULL,
    scope         TEXT NOT NULL,
    redirect_url  TEXT NOT NULL,
    redirect_sent INTEGER NOT NULL,
    created_at    ${t.int64} NOT NULL,
    expires_at    ${t.int64} NOT NULL,
    used_at       ${t.int64},
    family_id     TEXT REFERENCES token_families(id) ON DELETE SET NULL
  );
  CREATE TABLE refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    family_id  TEXT NOT NULL REFERENCES token_families(id) ON DELETE CASCADE,
    created_at ${t.int64} NOT NULL,
    expires_at ${t.int64} NOT NULL,
    used_at    ${t.int64}
  );
  CREATE INDEX refresh_tokens_family ON refresh_tokens(family_id);
  CREATE TABLE access_tokens (
    token_hash TEXT PRIMARY KEY,
    family_id  TEXT NOT NULL REFERENCES token_families(id) ON DELETE CASCADE,
    created_at ${t.int64} NOT NULL,
    expires_at ${t.int64} NOT NULL
  );
  CREATE INDEX access_tokens_family ON access_tokens(family_id);
  CREATE TABLE consent_nonces (
    nonce      TEXT PRIMARY KEY,
    expires_at ${t.int64} NOT NULL
  );
  `,
  // PKCE (RFC 7636): the S256 challenge a code was issued for.
  () => `ALTER TABLE auth_codes ADD COLUMN code_challenge TEXT;`,
  // Replay refusal (signature-ledger.ts): each accepted signature of a non-safe HMAC request, until its Date leaves the skew window.
  (t) => `
  CREATE TABLE hmac_replay (
    signature_hash TEXT PRIMARY KEY,
    expires_at     ${t.int64} NOT NULL
  );
  CREATE INDEX hmac_replay_expires ON hmac_replay(expires_at);
  `,
];

/** The SQL of migration `version` (0-based) in one dialect. */
export function migrationSql(version: number, dialect: Dialect): string {
  const migration = MIGRATIONS[version];
  if (!migration) throw new Error(`no gateway migration ${version}`);
  return migration(TYPES[dialect]);
}
