import type { ServerResponse } from "node:http";

/**
 * Answers a shutdown must not cut (connection-drain.ts). An endpoint holds
 * its answer before it changes the gateway's state (a grant's transaction,
 * a revocation, a sign-in): once that has committed, the only copy of its
 * result, a new token or code, is the answer on its way to the caller. Such
 * a request waits on nothing but the database, so it ends soon, deadline or
 * not; a cut one would leave a committed grant unanswered, and the client's
 * retry of a used refresh token revokes its whole family.
 */
const held = new WeakSet<ServerResponse>();

export function holdAnswer(res: ServerResponse): void {
  held.add(res);
}

export function isAnswerHeld(res: ServerResponse): boolean {
  return held.has(res);
}
