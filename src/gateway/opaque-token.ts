import { createHash, randomBytes } from "node:crypto";

/**
 * Codes and tokens are 256 random bits, base64url, behind a short prefix so
 * secret scanners and humans can tell them apart. Only their SHA-256 is
 * stored; a database leak does not reveal usable tokens.
 */
export type TokenKind = "code" | "access" | "refresh";

const PREFIX: Record<TokenKind, string> = { code: "rcc_", access: "rca_", refresh: "rcr_" };

export function newOpaqueToken(kind: TokenKind): string {
  return PREFIX[kind] + randomBytes(32).toString("base64url");
}

export function tokenHash(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

export function newId(): string {
  return randomBytes(16).toString("hex");
}
