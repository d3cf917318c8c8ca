import type { Clock } from "../clock.js";

/**
 * Slows password guessing on the consent form: after `maxFailures` wrong
 * passwords for one user name within `windowSeconds`, further attempts for
 * that name are refused until the window ends. Kept in memory, per process
 * (a restart forgets it); the map is bounded.
 */
export interface ThrottleOptions {
  clock: Clock;
  maxFailures?: number;
  windowSeconds?: number;
  maxEntries?: number;
}

interface Entry {
  failures: number;
  resetAt: number;
}

export class SignInThrottle {
  private readonly entries = new Map<string, Entry>();
  private readonly maxFailures: number;
  private readonly windowMs: number;
  private readonly maxEntries: number;

  constructor(private readonly options: ThrottleOptions) {
    this.maxFailures = options.maxFailures ?? 5;
    this.windowMs = (options.windowSeconds ?? 15 * 60) * 1000;
    this.maxEntries = options.maxEntries ?? 10_000;
  }

  /** Seconds until `username` may try again, or 0 when it may try now. */
  retryAfter(username: string): number {
    const entry = this.current(username);
    if (!entry || entry.failures < this.maxFailures) return 0;
    return Math.ceil((entry.resetAt - this.options.clock().getTime()) / 1000);
  }

  fail(username: string): void {
    const entry = this.current(username);
    if (entry) {
      entry.failures++;
      return;
    }
    if (this.entries.size >= this.maxEntries) this.prune();
    this.entries.set(username, { failures: 1, resetAt: this.options.clock().getTime() + this.windowMs });
  }

  succeed(username: string): void {
    this.entries.delete(username);
  }

  private current(username: string): Entry | undefined {
    const entry = this.entries.get(username);
    if (entry && entry.resetAt <= this.options.clock().getTime()) {
      this.entries.delete(username);
      return undefined;
    }
    return entry;
  }

  private prune(): void {
    const now = this.options.clock().getTime();
    for (const [name, entry] of this.entries) if (entry.resetAt <= now) this.entries.delete(name);
    // Still full: forget the oldest entries rather than grow without bound.
    for (const name of this.entries.keys()) {
      if (this.entries.size < this.maxEntries) break;
      this.entries.delete(name);
    }
  }
}
