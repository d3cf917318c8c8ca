import { HttpError } from "../http/http-error.js";
import type { IncomingMessage } from "node:http";

/**
 * Credentials and the headers a signature covers must mean one thing. Node
 * keeps only the first of two `Authorization` headers and joins two `Date`
 * or `Digest` headers with a comma, so the gateway and an upstream (or a
 * proxy in front) could each read a different value. A request that sends
 * any of them more than once is refused with 400 before anything reads them.
 */
export const SINGLE_VALUED = ["authorization", "date", "digest"] as const;

/** The check, synchronous; run by the gateway's one global middleware (server.ts). */
export function singleValuedCheck(names: readonly string[] = SINGLE_VALUED): (req: IncomingMessage) => void {
  const watched = new Set(names);
  const lengths = new Set(names.map((n) => n.length));
  return (req) => {
    const raw = req.rawHeaders;
    let seen: Set<string> | undefined;
    for (let i = 0; i < raw.length; i += 2) {
      // Runs on every request: lower-case only names of a watched length.
      if (!lengths.has(raw[i]!.length)) continue;
      const name = raw[i]!.toLowerCase();
      if (!watched.has(name)) continue;
      if (seen?.has(name)) throw new HttpError(400, "invalid_request", `the ${name} header appears more than once; send it once`);
      (seen ??= new Set()).add(name);
    }
  };
}
