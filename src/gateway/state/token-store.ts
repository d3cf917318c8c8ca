import type { Clock } from "../clock.js";
import { newId, newOpaqueToken, tokenHash } from "../opaque-token.js";
import { ACCESS_TOKEN_SECONDS, AUTH_CODE_SECONDS, REFRESH_TOKEN_SECONDS } from "../oauth/lifetimes.js";
import type { GatewayDb } from "./db.js";

/**
 * Rows of the OAuth state: authorization codes, token families, refresh and
 * access tokens. Callers pass raw codes and tokens; only their hashes reach
 * the database. Grant rules (who may exchange what) live in oauth/grants.ts.
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

const FAMILY_COLUMNS = "f.id, f.client_id AS clientId, f.username, f.scope, f.revoked_at AS revokedAt";

function family(row: Record<string, unknown>): Family {
  return { id: String(row.id), clientId: String(row.clientId), username: String(row.username), scope: String(row.scope), revokedAt: (row.revokedAt as number | null) ?? null };
}

export class TokenStore {
  private readonly q;

  constructor(readonly db: GatewayDb, private readonly clock: Clock) {
    this.q = {
      insertCode: db.prepare(
        "INSERT INTO auth_codes (code_hash, client_id, username, scope, redirect_url, redirect_sent, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      ),
      findCode: db.prepare(
        "SELECT client_id AS clientId, username, scope, redirect_url AS redirectUrl, redirect_sent AS redirectSent, expires_at AS expiresAt, used_at AS usedAt, family_id AS familyId FROM auth_codes WHERE code_hash = ?",
      ),
      useCode: db.prepare("UPDATE auth_codes SET used_at = ?, family_id = ? WHERE code_hash = ? AND used_at IS NULL"),
      insertFamily: db.prepare("INSERT INTO token_families (id, client_id, username, scope, created_at) VALUES (?, ?, ?, ?, ?)"),
      revokeFamily: db.prepare("UPDATE token_families SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL"),
      insertRefresh: db.prepare("INSERT INTO refresh_tokens (token_hash, family_id, created_at, expires_at) VALUES (?, ?, ?, ?)"),
      insertAccess: db.prepare("INSERT INTO access_tokens (token_hash, family_id, created_at, expires_at) VALUES (?, ?, ?, ?)"),
      findRefresh: db.prepare(
        `SELECT ${FAMILY_COLUMNS}, r.expires_at AS expiresAt, r.used_at AS usedAt FROM refresh_tokens r JOIN token_families f ON f.id = r.family_id WHERE r.token_hash = ?`,
      ),
      useRefresh: db.prepare("UPDATE refresh_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL"),
      useNonce: db.prepare("INSERT OR IGNORE INTO consent_nonces (nonce, expires_at) VALUES (?, ?)"),
      findAccess: db.prepare(
        `SELECT ${FAMILY_COLUMNS}, a.expires_at AS expiresAt, NULL AS usedAt FROM access_tokens a JOIN token_families f ON f.id = a.family_id WHERE a.token_hash = ?`,
      ),
    };
  }

  now(): number {
    return this.clock().getTime();
  }

  issueCode(input: { clientId: string; username: string; scope: string; redirectUrl: string; redirectSent: boolean }): string {
    const code = newOpaqueToken("code");
    const now = this.now();
    this.q.insertCode.run(tokenHash(code), input.clientId, input.username, input.scope, input.redirectUrl, input.redirectSent ? 1 : 0, now, now + AUTH_CODE_SECONDS * 1000);
    return code;
  }

  findCode(code: string): CodeRow | undefined {
    const row = this.q.findCode.get(tokenHash(code)) as (Omit<CodeRow, "redirectSent"> & { redirectSent: number }) | undefined;
    return row && { ...row, redirectSent: row.redirectSent === 1 };
  }

  /** Marks the code used; false when another request used it first. */
  useCode(code: string, familyId: string): boolean {
    return this.q.useCode.run(this.now(), familyId, tokenHash(code)).changes === 1;
  }

  createFamily(clientId: string, username: string, scope: string): string {
    const id = newId();
    this.q.insertFamily.run(id, clientId, username, scope, this.now());
    return id;
  }

  revokeFamily(familyId: string, reason: string): void {
    this.q.revokeFamily.run(this.now(), reason, familyId);
  }

  issueTokens(familyId: string): IssuedTokens {
    const accessToken = newOpaqueToken("access");
    const refreshToken = newOpaqueToken("refresh");
    const now = this.now();
    this.q.insertAccess.run(tokenHash(accessToken), familyId, now, now + ACCESS_TOKEN_SECONDS * 1000);
    this.q.insertRefresh.run(tokenHash(refreshToken), familyId, now, now + REFRESH_TOKEN_SECONDS * 1000);
    return { accessToken, refreshToken, expiresIn: ACCESS_TOKEN_SECONDS };
  }

  findRefresh(token: string): TokenRow | undefined {
    const row = this.q.findRefresh.get(tokenHash(token)) as Record<string, unknown> | undefined;
    return row && { family: family(row), expiresAt: row.expiresAt as number, usedAt: (row.usedAt as number | null) ?? null };
  }

  /** Marks the refresh token used; false when another request used it first. */
  useRefresh(token: string): boolean {
    return this.q.useRefresh.run(this.now(), tokenHash(token)).changes === 1;
  }

  findAccess(token: string): TokenRow | undefined {
    const row = this.q.findAccess.get(tokenHash(token)) as Record<string, unknown> | undefined;
    return row && { family: family(row), expiresAt: row.expiresAt as number, usedAt: null };
  }

  /** Records a consent form as submitted; false when it was submitted before. */
  useConsentNonce(nonce: string, expiresAt: number): boolean {
    return this.q.useNonce.run(nonce, expiresAt).changes === 1;
  }

  /** Runs `fn` in one write transaction (BEGIN IMMEDIATE), so check-then-use cannot interleave. */
  atomically<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  /**
   * Deletes rows that can no longer matter. Used refresh tokens are kept
   * until they would have expired, so a replay inside that window is still
   * recognised as reuse and revokes the family.
   */
  purgeExpired(): void {
    const now = this.now();
    const dayAgo = now - 24 * 3600 * 1000;
    this.atomically(() => {
      this.db.prepare("DELETE FROM auth_codes WHERE expires_at < ?").run(dayAgo);
      this.db.prepare("DELETE FROM access_tokens WHERE expires_at < ?").run(now);
      this.db.prepare("DELETE FROM refresh_tokens WHERE expires_at < ?").run(now);
      this.db.prepare("DELETE FROM consent_nonces WHERE expires_at < ?").run(now);
      this.db
        .prepare(
          "DELETE FROM token_families WHERE NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.family_id = token_families.id) AND NOT EXISTS (SELECT 1 FROM access_tokens a WHERE a.family_id = token_families.id) AND created_at < ?",
        )
        .run(dayAgo);
    });
  }
}
