/** Lifetimes from spec §3 and §8; the code lifetime is our choice (spec: not shown). */
export const ACCESS_TOKEN_SECONDS = 3600;
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
export const AUTH_CODE_SECONDS = 10 * 60;
/** A consent form must be submitted within this time after it was shown. */
export const CONSENT_FORM_SECONDS = 10 * 60;
