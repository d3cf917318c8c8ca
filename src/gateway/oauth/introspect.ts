import { parseScope } from "../scope-set.js";
import type { TokenStore } from "../state/token-store.js";

/** The caller behind a valid access token. */
export interface TokenIdentity {
  username: string;
  clientId: string;
  scopes: string[];
}

export type AccessCheck = { ok: true; identity: TokenIdentity } | { ok: false; reason: "unknown" | "expired" | "revoked" };

/** Looks an access token up (by its hash) and decides whether it is usable now. */
export async function checkAccessToken(store: TokenStore, token: string): Promise<AccessCheck> {
  const row = await store.findAccess(token);
  if (!row) return { ok: false, reason: "unknown" };
  if (row.family.revokedAt !== null) return { ok: false, reason: "revoked" };
  if (row.expiresAt <= store.now()) return { ok: false, reason: "expired" };
  return { ok: true, identity: { username: row.family.username, clientId: row.family.clientId, scopes: parseScope(row.family.scope) ?? [] } };
}
