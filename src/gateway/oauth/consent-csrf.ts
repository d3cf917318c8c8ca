import { createHmac, randomBytes } from "node:crypto";
import { constantTimeEqual } from "../constant-time.js";
import { CONSENT_FORM_SECONDS } from "./lifetimes.js";

/**
 * CSRF protection of the consent form. The validated authorization request
 * travels in a hidden field, sealed with an HMAC under a server key (so it
 * cannot be altered), together with a random nonce that also goes into an
 * HttpOnly SameSite=Strict cookie. A POST is accepted only when the sealed
 * request is intact, unexpired, and its nonce equals the browser's cookie:
 * another site can neither forge the form nor read the cookie.
 */
export interface AuthRequest {
  clientId: string;
  /** Normalised scope string. */
  scope: string;
  state?: string;
  /** Only when the client sent redirect_uri; the token request must then repeat it. */
  redirectUri?: string;
  /** PKCE S256 challenge, when the client sent one. */
  codeChallenge?: string;
}

export interface SealedRequest extends AuthRequest {
  nonce: string;
  /** Expiry, Unix milliseconds. */
  exp: number;
}

export class ConsentSeal {
  constructor(private readonly key: Buffer) {}

  seal(request: AuthRequest, now: Date): { field: string; nonce: string } {
    const nonce = randomBytes(24).toString("base64url");
    const sealed: SealedRequest = { ...request, nonce, exp: now.getTime() + CONSENT_FORM_SECONDS * 1000 };
    const payload = Buffer.from(JSON.stringify(sealed)).toString("base64url");
    return { field: `${payload}.${this.mac(payload)}`, nonce };
  }

  open(field: string, now: Date): SealedRequest | undefined {
    const [payload, mac, extra] = field.split(".");
    if (!payload || !mac || extra !== undefined) return undefined;
    if (!constantTimeEqual(mac, this.mac(payload))) return undefined;
    const sealed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as SealedRequest;
    return sealed.exp > now.getTime() ? sealed : undefined;
  }

  private mac(payload: string): string {
    return createHmac("sha256", this.key).update(payload).digest("base64url");
  }
}

/** One cookie per form, so two sign-in tabs do not overwrite each other. */
export function consentCookieName(nonce: string): string {
  return `relcast_consent_${nonce.slice(0, 12).replace(/[^A-Za-z0-9]/g, "x")}`;
}

/** Attributes of the consent cookie (set and read with hono's cookie helpers). */
export const CONSENT_COOKIE = { path: "/auth", httpOnly: true, sameSite: "Strict", maxAge: CONSENT_FORM_SECONDS } as const;
