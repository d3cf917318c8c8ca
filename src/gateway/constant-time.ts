import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Compares two secrets without leaking, through timing, how many leading
 * characters match. Both sides are hashed first so inputs of different
 * lengths take the same path (timingSafeEqual needs equal lengths).
 */
export function constantTimeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const da = createHash("sha256").update(a).digest();
  const db = createHash("sha256").update(b).digest();
  return timingSafeEqual(da, db);
}
