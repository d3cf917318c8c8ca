import { formatScope, parseScope, sameScope } from "../scope-set.js";
import type { IssuedTokens, TokenStore } from "../state/token-store.js";
import type { OAuthErrorCode } from "./oauth-error.js";
import { verifierMatches } from "./pkce.js";

/**
 * The two grants of spec §4.2 and §4.3, each one transaction that locks the
 * code or refresh token it decides on, so that two requests racing with the
 * same one (in one process or in several sharing a database) cannot both
 * win. A replayed code or refresh token revokes every token of its family
 * (RFC 6749 §4.1.2, RFC 9700 §4.14.2).
 */
export type GrantResult = { ok: true; tokens: IssuedTokens } | { ok: false; error: OAuthErrorCode; description: string };

const fail = (error: OAuthErrorCode, description: string): GrantResult => ({ ok: false, error, description });

export interface CodeGrantInput {
  clientId: string;
  code: string;
  scope: string[];
  redirectUri: string | undefined;
  codeVerifier: string | undefined;
  /** Public clients must have used PKCE (RFC 9700 §2.1.1). */
  requirePkce: boolean;
}

export function authorizationCodeGrant(store: TokenStore, input: CodeGrantInput): Promise<GrantResult> {
  return store.transaction(async (tx) => {
    const row = await tx.findCodeForUpdate(input.code);
    if (!row || row.clientId !== input.clientId) return fail("invalid_grant", "authorization code is invalid");
    if (row.usedAt !== null) {
      if (row.familyId) await tx.revokeFamily(row.familyId, "authorization_code_reuse");
      return fail("invalid_grant", "authorization code was already used; tokens issued for it are revoked");
    }
    if (row.expiresAt <= store.now()) return fail("invalid_grant", "authorization code expired");
    if (row.redirectSent && input.redirectUri === undefined) {
      return fail("invalid_grant", "redirect_uri is required because the authorization request carried it");
    }
    if (input.redirectUri !== undefined && input.redirectUri !== row.redirectUrl) {
      return fail("invalid_grant", "redirect_uri does not match the authorization request");
    }
    if (input.requirePkce && row.codeChallenge === null) return fail("invalid_grant", "public clients must use PKCE; this code was issued without a code_challenge");
    // RFC 7636 §4.6: a code issued for a challenge needs its verifier; a verifier without a challenge is refused too (RFC 9700 §2.1.1).
    if (row.codeChallenge !== null && (input.codeVerifier === undefined || !verifierMatches(input.codeVerifier, row.codeChallenge))) {
      return fail("invalid_grant", input.codeVerifier === undefined ? "code_verifier is required: the authorization request carried a code_challenge" : "code_verifier does not match the code_challenge");
    }
    if (row.codeChallenge === null && input.codeVerifier !== undefined) {
      return fail("invalid_grant", "code_verifier was sent but the authorization request carried no code_challenge");
    }
    const authorized = parseScope(row.scope) ?? [];
    if (!sameScope(input.scope, authorized)) {
      return fail("invalid_scope", "scope must equal the scope the user authorized");
    }
    const familyId = await tx.createFamily(row.clientId, row.username, formatScope(authorized));
    if (!(await tx.useCode(input.code, familyId))) return fail("invalid_grant", "authorization code was already used");
    return { ok: true, tokens: await tx.issueTokens(familyId) };
  });
}

export interface RefreshGrantInput {
  clientId: string;
  refreshToken: string;
  scope: string[];
}

export function refreshTokenGrant(store: TokenStore, input: RefreshGrantInput): Promise<GrantResult> {
  return store.transaction(async (tx) => {
    const row = await tx.findRefreshForUpdate(input.refreshToken);
    if (!row || row.family.clientId !== input.clientId) return fail("invalid_grant", "refresh token is invalid");
    if (row.family.revokedAt !== null) return fail("invalid_grant", "refresh token was revoked");
    if (row.usedAt !== null) {
      await tx.revokeFamily(row.family.id, "refresh_token_reuse");
      return fail("invalid_grant", "refresh token was already used; every token of its family is revoked");
    }
    if (row.expiresAt <= store.now()) return fail("invalid_grant", "refresh token expired");
    if (!sameScope(input.scope, parseScope(row.family.scope) ?? [])) {
      return fail("invalid_scope", "scope must equal the scope the user authorized");
    }
    if (!(await tx.useRefresh(input.refreshToken))) {
      await tx.revokeFamily(row.family.id, "refresh_token_reuse");
      return fail("invalid_grant", "refresh token was already used; every token of its family is revoked");
    }
    return { ok: true, tokens: await tx.issueTokens(row.family.id) };
  });
}
