import { formatScope, parseScope, sameScope } from "../scope-set.js";
import type { IssuedTokens, TokenStore } from "../state/token-store.js";
import type { OAuthErrorCode } from "./oauth-error.js";

/**
 * The two grants of spec §4.2 and §4.3, each one write transaction so that
 * two requests racing with the same code or refresh token cannot both win.
 * A replayed code or refresh token revokes every token of its family
 * (RFC 6749 §4.1.2, RFC 9700 §4.14.2).
 */
export type GrantResult = { ok: true; tokens: IssuedTokens } | { ok: false; error: OAuthErrorCode; description: string };

const fail = (error: OAuthErrorCode, description: string): GrantResult => ({ ok: false, error, description });

export interface CodeGrantInput {
  clientId: string;
  code: string;
  scope: string[];
  redirectUri: string | undefined;
}

export function authorizationCodeGrant(store: TokenStore, input: CodeGrantInput): GrantResult {
  return store.atomically(() => {
    const row = store.findCode(input.code);
    if (!row || row.clientId !== input.clientId) return fail("invalid_grant", "authorization code is invalid");
    if (row.usedAt !== null) {
      if (row.familyId) store.revokeFamily(row.familyId, "authorization_code_reuse");
      return fail("invalid_grant", "authorization code was already used; tokens issued for it are revoked");
    }
    if (row.expiresAt <= store.now()) return fail("invalid_grant", "authorization code expired");
    if (row.redirectSent && input.redirectUri === undefined) {
      return fail("invalid_grant", "redirect_uri is required because the authorization request carried it");
    }
    if (input.redirectUri !== undefined && input.redirectUri !== row.redirectUrl) {
      return fail("invalid_grant", "redirect_uri does not match the authorization request");
    }
    const authorized = parseScope(row.scope) ?? [];
    if (!sameScope(input.scope, authorized)) {
      return fail("invalid_scope", "scope must equal the scope the user authorized");
    }
    const familyId = store.createFamily(row.clientId, row.username, formatScope(authorized));
    if (!store.useCode(input.code, familyId)) return fail("invalid_grant", "authorization code was already used");
    return { ok: true, tokens: store.issueTokens(familyId) };
  });
}

export interface RefreshGrantInput {
  clientId: string;
  refreshToken: string;
  scope: string[];
}

export function refreshTokenGrant(store: TokenStore, input: RefreshGrantInput): GrantResult {
  return store.atomically(() => {
    const row = store.findRefresh(input.refreshToken);
    if (!row || row.family.clientId !== input.clientId) return fail("invalid_grant", "refresh token is invalid");
    if (row.family.revokedAt !== null) return fail("invalid_grant", "refresh token was revoked");
    if (row.usedAt !== null) {
      store.revokeFamily(row.family.id, "refresh_token_reuse");
      return fail("invalid_grant", "refresh token was already used; every token of its family is revoked");
    }
    if (row.expiresAt <= store.now()) return fail("invalid_grant", "refresh token expired");
    if (!sameScope(input.scope, parseScope(row.family.scope) ?? [])) {
      return fail("invalid_scope", "scope must equal the scope the user authorized");
    }
    if (!store.useRefresh(input.refreshToken)) return fail("invalid_grant", "refresh token was already used");
    return { ok: true, tokens: store.issueTokens(row.family.id) };
  });
}
