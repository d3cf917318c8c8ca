/**
 * Schema of the gateway's state, as an append-only list: entry i moves the
 * database from version i to i+1 (SQLite `user_version`, PostgreSQL table
 * `relcast_schema`). Both databases get the same entries; where the SQL
 * types differ (SQLite INTEGER/BLOB, PostgreSQL BIGINT/BYTEA) an entry
 * carries one text per dialect. Never edit an entry that has shipped; add a
 * new one.
 *
 * Times are Unix milliseconds. Codes and tokens appear only as SHA-256 hex.
 */
export interface Migration {
  sqlite: string;
  postgres: string;
}

const both = (sql: string): Migration => ({ sqlite: sql, postgres: sql });

export const MIGRATIONS: readonly Migration[] = [
  {
    sqlite: `
  CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value BLOB NOT NULL
  );
  CREATE TABLE token_families (
    id             TEXT PRIMARY KEY,
    client_id      TEXT NOT NULL,
    username       TEXT NOT NULL,
    scope          TEXT NOT NULL,
    created_at     INTEGER NOT NULL,
    revoked_at     INTEGER,
    revoked_reason TEXT
  );
  CREATE TABLE auth_codes (
    code_hash     TEXT PRIMARY KEY,
    client_id     TEXT NOT NULL,
    username      TEXT NOT NULL,
    scope         TEXT NOT NULL,
    redirect_url  TEXT NOT NULL,
    redirect_sent INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    used_at       INTEGER,
    family_id     TEXT REFERENCES token_families(id) ON DELETE SET NULL
  );
  CREATE TABLE refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    family_id  TEXT NOT NULL REFERENCES token_families(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
  );
  CREATE INDEX refresh_tokens_family ON refresh_tokens(family_id);
  CREATE TABLE access_tokens (
    token_hash TEXT PRIMARY KEY,
    family_id  TEXT NOT NULL REFERENCES token_families(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX access_tokens_family ON access_tokens(family_id);
  CREATE TABLE consent_nonces (
    nonce      TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL
  );
  `,
    postgres: `
  CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value BYTEA NOT NULL
  );
  CREATE TABLE token_families (
    id             TEXT PRIMARY KEY,
    client_id      TEXT NOT NULL,
    username       TEXT NOT NULL,
    scope          TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    revoked_at     BIGINT,
    revoked_reason TEXT
  );
  CREATE TABLE auth_codes (
    code_hash     TEXT PRIMARY KEY,
    client_id     TEXT NOT NULL,
    username      TEXT NOT NULL,
    scope         TEXT NOT NULL,
    redirect_url  TEXT NOT NULL,
    redirect_sent INTEGER NOT NULL,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL,
    used_at       BIGINT,
    family_id     TEXT REFERENCES token_families(id) ON DELETE SET NULL
  );
  CREATE TABLE refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    family_id  TEXT NOT NULL REFERENCES token_families(id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
  );
  CREATE INDEX refresh_tokens_family ON refresh_tokens(family_id);
  CREATE TABLE access_tokens (
    token_hash TEXT PRIMARY KEY,
    family_id  TEXT NOT NULL REFERENCES token_families(id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
  );
  CREATE INDEX access_tokens_family ON access_tokens(family_id);
  CREATE TABLE consent_nonces (
    nonce      TEXT PRIMARY KEY,
    expires_at BIGINT NOT NULL
  );
  `,
  },
  // PKCE (RFC 7636): the S256 challenge a code was issued for.
  both(`ALTER TABLE auth_codes ADD COLUMN code_challenge TEXT;`),
];
