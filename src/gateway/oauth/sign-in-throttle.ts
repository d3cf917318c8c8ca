import { createHmac } from "node:crypto";
import type { TokenStore } from "../state/token-store.js";

/**
 * Slows password guessing on the consent form: at most `maxFailures`
 * sign-in attempts per user name are checked within `windowSeconds`; more
 * are refused until the window ends. An attempt is reserved in the state
 * before its password is checked (scrypt is asynchronous), so attempts
 * arriving together cannot all be checked; a wrong password keeps its
 * reservation, a right one clears the name's count. The count lives in the
 * gateway state (table `sign_in_attempts`), shared by every instance on one
 * PostgreSQL database.
 *
 * Names are stored as a keyed hash (`key`, a random secret in the state): a
 * name typed into the user field may be a password. A configured user name
 * has a row of its own; any other name takes one of `unknownSlots` rows
 * chosen by its hash, taking the slot over from another name, so a flood of
 * invented names keeps the table bounded and never touches a real user's
 * count. Both kinds of name take the same path (one upsert, then the same
 * scrypt work), so answers and timing do not tell which names exist.
 */
export interface SignInThrottleOptions {
  store: TokenStore;
  /** The configured user names. */
  users: ReadonlySet<string>;
  key: Buffer;
  maxFailures: number;
  windowSeconds: number;
  unknownSlots?: number;
}

export type SignInAttempt = { ok: true } | { ok: false; retryAfterSeconds: number };

export const UNKNOWN_NAME_SLOTS = 65_536;

export class SignInThrottle {
  private readonly slots: number;

  constructor(private readonly options: SignInThrottleOptions) {
    this.slots = options.unknownSlots ?? UNKNOWN_NAME_SLOTS;
  }

  /** Reserves one attempt for `username`, or says how long until it may try again. */
  async reserve(username: string): Promise<SignInAttempt> {
    const { nameKey, nameHash } = this.keyOf(username);
    const { store, maxFailures, windowSeconds } = this.options;
    const reserved = await store.reserveSignIn(nameKey, nameHash, maxFailures, windowSeconds * 1000);
    if (reserved.attempts <= maxFailures) return { ok: true };
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((reserved.resetAt - store.now()) / 1000)) };
  }

  /** A successful sign-in: the name's count starts again. */
  async succeeded(username: string): Promise<void> {
    await this.options.store.clearSignIn(this.keyOf(username).nameKey);
  }

  private keyOf(username: string): { nameKey: string; nameHash: string } {
    const digest = createHmac("sha256", this.options.key).update(username, "utf8").digest();
    const nameHash = digest.toString("hex");
    if (this.options.users.has(username)) return { nameKey: `user:${nameHash}`, nameHash };
    return { nameKey: `slot:${digest.readUInt32BE(0) % this.slots}`, nameHash };
  }
}
