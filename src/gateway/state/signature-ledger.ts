import { createHash } from "node:crypto";
import type { Clock } from "../clock.js";
import type { SqlRunner } from "./sql-driver.js";

/**
 * The signatures of accepted non-safe HMAC requests (table `hmac_replay`),
 * shared by every instance on the database, so each is accepted once
 * (middleware/replay-guard.ts). Only a SHA-256 of the signature's bytes is
 * stored. Recording is one INSERT on the primary key: of two copies racing,
 * in one process or on two instances, the database lets exactly one in.
 *
 * A row is needed only while its Date is inside the skew window
 * (`expiresAt`); after that the Date check refuses the signature anyway.
 * Expired rows are deleted at most once a minute while signatures are being
 * recorded, and by the store's hourly purge, so the table holds about one
 * window of requests. They are kept a minute past their expiry for
 * instances whose clocks run a little behind this one's.
 */
const PURGE_EVERY_MS = 60_000;
const CLOCK_MARGIN_MS = 60_000;

export class SignatureLedger {
  private nextPurge = 0;

  constructor(
    private readonly sql: SqlRunner,
    private readonly clock: Clock,
  ) {}

  /** Records `signature` (the Base64 value of the Authorization header) as used; false when it was recorded before, by any instance. */
  async use(signature: string, expiresAt: number): Promise<boolean> {
    const now = this.clock().getTime();
    if (now >= this.nextPurge) {
      this.nextPurge = now + PURGE_EVERY_MS;
      // Not awaited, so no request waits for it; a failure is reported by the hourly purgeExpired, which deletes the same rows.
      this.purge().catch(() => undefined);
    }
    return (await this.sql.run("INSERT INTO hmac_replay (signature_hash, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING", [signatureHash(signature), expiresAt])) === 1;
  }

  async purge(): Promise<void> {
    await this.sql.run("DELETE FROM hmac_replay WHERE expires_at < ?", [this.clock().getTime() - CLOCK_MARGIN_MS]);
  }
}

/**
 * The key of a signature: SHA-256 of its decoded bytes, so no other spelling
 * of the same MAC could pass as new. No client id: two credentials can only
 * make the same signature with the same key, and then a signature made for
 * one and presented as the other's is the same signature used twice.
 */
export function signatureHash(signature: string): string {
  return createHash("sha256").update(Buffer.from(signature, "base64")).digest("hex");
}
