import type { Clock } from "../clock.js";
import { newId, newOpaqueToken, tokenHash } from "../opaque-token.js";
import { ACCESS_TOKEN_SECONDS, AUTH_CODE_SECONDS, REFRESH_TOKEN_SECONDS } from "../oauth/lifetimes.js";
import { SignatureLedger } from "./signature-ledger.js";
import type { Row, SqlDriver, SqlRunner } from "./sql-driver.js";

/**
 * Rows of the OAuth state: authorization codes, token families, refresh and
 * access tokens, consent nonces, settings. Callers pass raw codes and
 * tokens; only their hashes reach the database. Grant rules (who may
 * exchange what) live in oauth/grants.ts and run inside `transaction`, whose
 * `find*ForUpdate` reads lock the row they return until the transaction ends.
 */
export interface Family {
  id: string;
  clientId: string;
  username: string;
  scope: string;
  revokedAt: number | null;
}

export interface CodeRow {
  clientId: string;
  username: string;
  scope: string;
  redirectUrl: string;
  redirectSent: boolean;
  codeChallenge: string | null;
  expiresAt: number;
  usedAt: number | null;
  familyId: string | null;
}

export interface TokenRow {
  family: Family;
  expiresAt: number;
  usedAt: number | null;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

export interface NewCode {
  clientId: string;
  username: string;
  scope: string;
  redirectUrl: string;
  redirectSent: boolean;
  codeChallenge?: string;
}

const FAMILY_COLUMNS = `f.id, f.client_id AS "clientId", f.username, f.scope, f.revoked_at AS "revokedAt"`;
const num = (v: unknown): number => Number(v);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function family(row: Row): Family {
  return { id: String(row.id), clientId: String(row.clientId), username: String(row.username), scope: String(row.scope), revokedAt: numOrNull(row.revokedAt) };
}

/** What a grant may do, inside one transaction. */
export class StoreTx {
  constructor(
    private readonly sql: SqlRunner,
    private readonly lockRows: string,
    private readonly now: number,
  ) {}

  async findCodeForUpdate(code: string): Promise<CodeRow | undefined> {
    const [row] = await this.sql.all(
      `SELECT client_id AS "clientId", username, scope, redirect_url AS "redirectUrl", redirect_sent AS "redirectSent", code_challenge AS "codeChallenge", expires_at AS "expiresAt", used_at AS "usedAt", family_id AS "familyId" FROM auth_codes WHERE code_hash = ?${this.lockRows}`,
      [tokenHash(code)],
    );
    if (!row) return undefined;
    return {
      clientId: String(row.clientId),
      username: String(row.username),
      scope: String(row.scope),
      redirectUrl: String(row.redirectUrl),
      redirectSent: num(row.redirectSent) === 1,
      codeChallenge: (row.codeChallenge as string | null) ?? null,
      expiresAt: num(row.expiresAt),
      usedAt: numOrNull(row.usedAt),
      familyId: (row.familyId as string | null) ?? null,
    };
  }

  /** Marks the code used; false when another request used it first. */
  async useCode(code: string, familyId: string): Promise<boolean> {
    return (await this.sql.run("UPDATE auth_codes SET used_at = ?, family_id = ? WHERE code_hash = ? AND used_at IS NULL", [this.now, familyId, tokenHash(code)])) === 1;
  }

  async createFamily(clientId: string, username: string, scope: string): Promise<string> {
    const id = newId();
    await this.sql.run("INSERT INTO token_families (id, client_id, username, scope, created_at) VALUES (?, ?, ?, ?, ?)", [id, clientId, username, scope, this.now]);
    return id;
  }

  async revokeFamily(familyId: string, reason: string): Promise<void> {
    await this.sql.run("UPDATE token_families SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL", [this.now, reason, familyId]);
  }

  async issueTokens(familyId: string): Promise<IssuedTokens> {
    const accessToken = newOpaqueToken("access");
    const refreshToken = newOpaqueToken("refresh");
    await this.sql.run("INSERT INTO access_tokens (token_hash, family_id, created_at, expires_at) VALUES (?, ?, ?, ?)", [
      tokenHash(accessToken),
      familyId,
      this.now,
      this.now + ACCESS_TOKEN_SECONDS * 1000,
    ]);
    await this.sql.run("INSERT INTO refresh_tokens (token_hash, family_id, created_at, expires_at) VALUES (?, ?, ?, ?)", [
      tokenHash(refreshToken),
      familyId,
      this.now,
      this.now + REFRESH_TOKEN_SECONDS * 1000,
    ]);
    return { accessToken, refreshToken, expiresIn: ACCESS_TOKEN_SECONDS };
  }

  async findRefreshForUpdate(token: string): Promise<TokenRow | undefined> {
    const lock = this.lockRows ? `${this.lockRows} OF r` : "";
    const [row] = await this.sql.all(
      `SELECT ${FAMILY_COLUMNS}, r.expires_at AS "expiresAt", r.used_at AS "usedAt" FROM refresh_tokens r JOIN token_families f ON f.id = r.family_id WHERE r.token_hash = ?${lock}`,
      [tokenHash(token)],
    );
    return row && { family: family(row), expiresAt: num(row.expiresAt), usedAt: numOrNull(row.usedAt) };
  }

  /** Marks the refresh token used; false when another request used it first. */
  async useRefresh(token: string): Promise<boolean> {
    return (await this.sql.run("UPDATE refresh_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL", [this.now, tokenHash(token)])) === 1;
  }

  /** The family of an access or refresh token, for revocation (RFC 7009). */
  async findFamilyOf(token: string, hint: "access_token" | "refresh_token" | undefined): Promise<Family | undefined> {
    const tables = hint === "access_token" ? ["access_tokens", "refresh_tokens"] : ["refresh_tokens", "access_tokens"];
    for (const table of tables) {
      const [row] = await this.sql.all(`SELECT ${FAMILY_COLUMNS} FROM ${table} t JOIN token_families f ON f.id = t.family_id WHERE t.token_hash = ?`, [tokenHash(token)]);
      if (row) return family(row);
    }
    return undefined;
  }
}

export class TokenStore {
  /** The accepted signatures of non-safe HMAC requests (replay refusal). */
  readonly signatures: SignatureLedger;

  constructor(
    private readonly driver: SqlDriver,
    private readonly clock: Clock,
  ) {
    this.signatures = new SignatureLedger(driver, clock);
  }

  get description(): string {
    return this.driver.description;
  }

  now(): number {
    return this.clock().getTime();
  }

  /** Runs `fn` in one transaction; on PostgreSQL the rows it reads `ForUpdate` stay locked until it ends. */
  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    const now = this.now();
    return this.driver.transaction((sql) => fn(new StoreTx(sql, this.driver.lockRows, now)));
  }

  async issueCode(input: NewCode): Promise<string> {
    const code = newOpaqueToken("code");
    const now = this.now();
    await this.driver.run(
      "INSERT INTO auth_codes (code_hash, client_id, username, scope, redirect_url, redirect_sent, code_challenge, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      [tokenHash(code), input.clientId, input.username, input.scope, input.redirectUrl, input.redirectSent ? 1 : 0, input.codeChallenge ?? null, now, now + AUTH_CODE_SECONDS * 1000],
    );
    return code;
  }

  async findAccess(token: string): Promise<TokenRow | undefined> {
    const [row] = await this.driver.all(
      `SELECT ${FAMILY_COLUMNS}, a.expires_at AS "expiresAt" FROM access_tokens a JOIN token_families f ON f.id = a.family_id WHERE a.token_hash = ?`,
      [tokenHash(token)],
    );
    return row && { family: family(row), expiresAt: num(row.expiresAt), usedAt: null };
  }

  /** Records a consent form as submitted; false when it was submitted before (by any instance). */
  async useConsentNonce(nonce: string, expiresAt: number): Promise<boolean> {
    return (await this.driver.run("INSERT INTO consent_nonces (nonce, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING", [nonce, expiresAt])) === 1;
  }

  /** A random key kept in the database, created by whichever instance comes first (consent-form signing key). */
  async persistentKey(name: string, create: () => Buffer): Promise<Buffer> {
    await this.driver.run("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT DO NOTHING", [name, create()]);
    const [row] = await this.driver.all("SELECT value FROM settings WHERE key = ?", [name]);
    return Buffer.from(row!.value as Buffer);
  }

  /**
   * Deletes rows that can no longer matter. Used refresh tokens are kept
   * until they would have expired, so a replay inside that window is still
   * recognised as reuse and revokes the family.
   */
  async purgeExpired(): Promise<void> {
    const now = this.now();
    const dayAgo = now - 24 * 3600 * 1000;
    await this.driver.transaction(async (sql) => {
      await sql.run("DELETE FROM auth_codes WHERE expires_at < ?", [dayAgo]);
      await sql.run("DELETE FROM access_tokens WHERE expires_at < ?", [now]);
      await sql.run("DELETE FROM refresh_tokens WHERE expires_at < ?", [now]);
      await sql.run("DELETE FROM consent_nonces WHERE expires_at < ?", [now]);
      await sql.run(
        "DELETE FROM token_families WHERE NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.family_id = token_families.id) AND NOT EXISTS (SELECT 1 FROM access_tokens a WHERE a.family_id = token_families.id) AND created_at < ?",
        [dayAgo],
      );
    });
    await this.signatures.purge();
  }

  close(): Promise<void> {
    return this.driver.close();
  }
}
