import { refreshTokens, type ClientCredentials, type TokenSet } from "./token-client.js";
import type { TokenPersistence } from "./token-persistence.js";

/**
 * Hands out a valid access token, refreshing shortly before expiry.
 * Refreshes are single-flight: however many callers ask at once, one refresh
 * request is made and everyone awaits it, so a refresh token is never spent
 * twice (which would revoke the whole token family). Each new token set is
 * persisted before callers get it.
 */
export interface TokenHolderOptions {
  client: ClientCredentials;
  persistence: TokenPersistence;
  /** Refresh when fewer than this many seconds of life are left. Default 60. */
  refreshBeforeSeconds?: number;
  now?: () => Date;
}

export class TokenHolder {
  private current: TokenSet | undefined;
  private inflight: Promise<TokenSet> | undefined;
  private readonly now: () => Date;
  private readonly marginMs: number;

  constructor(private readonly options: TokenHolderOptions) {
    this.now = options.now ?? (() => new Date());
    this.marginMs = (options.refreshBeforeSeconds ?? 60) * 1000;
  }

  /** Stores tokens from a code exchange. */
  async setTokens(tokens: TokenSet): Promise<void> {
    this.current = tokens;
    await this.options.persistence.save(tokens);
  }

  async getAccessToken(): Promise<string> {
    const tokens = this.current ?? (this.current = await this.options.persistence.load());
    if (!tokens) throw new Error("no tokens stored: authorize the application first (exchange a code)");
    if (this.fresh(tokens)) return tokens.accessToken;
    return (await this.refresh()).accessToken;
  }

  /** After a 401 with this token: make the next call refresh (only if nobody has yet). */
  invalidate(accessToken: string): void {
    if (this.current?.accessToken === accessToken) this.current = { ...this.current, expiresAt: 0 };
  }

  refresh(): Promise<TokenSet> {
    this.inflight ??= this.doRefresh().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private fresh(tokens: TokenSet): boolean {
    return tokens.expiresAt - this.now().getTime() > this.marginMs;
  }

  private async doRefresh(): Promise<TokenSet> {
    // Another process sharing the persistence may have rotated already. The
    // newest set (latest expiry) holds the only unspent refresh token.
    const stored = await this.options.persistence.load();
    const newest = [stored, this.current].reduce<TokenSet | undefined>((a, b) => (!a || (b && b.expiresAt > a.expiresAt) ? b : a), undefined);
    if (!newest) throw new Error("no refresh token stored: authorize the application first");
    if (newest !== this.current && this.fresh(newest)) {
      this.current = newest;
      return newest;
    }
    const spend = newest;
    const next = await refreshTokens(this.options.client, spend.refreshToken);
    this.current = next;
    await this.options.persistence.save(next);
    return next;
  }
}
