import { HttpError } from "../http/http-error.js";
import type { IncomingMessage } from "node:http";

/**
 * Credentials and the headers a signature covers must mean one thing. Node
 * keeps only the first of two `Authorization` headers and joins two `Date`
 * or `Digest` headers with a comma, so the gateway and an upstream (or a
 * proxy in front) could each read a different value. A request that sends
 * any of them more than once is refused with 400 before anything reads them.
 */
export const SINGLE_VALUED = ["authorization", "date", "digest", "host"] as const;

/** The check, synchronous; run by the gateway's one global middleware (server.ts). */
export function singleValuedCheck(names: readonly string[] = SINGLE_VALUED): (req: IncomingMessage) => void {
  const watched = names.map((n) => n.toLowerCase());
  return (req) => {
    const raw = req.rawHeaders;
    let seen = 0; // bit k: watched[k] was seen
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!;
      for (let k = 0; k < watched.length; k++) {
        // Runs on every request: a case-blind comparison in place, no lower-cased copy of each name.
        if (!sameAsciiLetters(name, watched[k]!)) continue;
        if (seen & (1 << k)) throw new HttpError(400, "invalid_request", `the ${watched[k]} header appears more than once; send it once`);
        seen |= 1 << k;
      }
    }
  };
}

/** Whether `name` is `lower` (lower-case letters, digits and '-') in any case. */
function sameAsciiLetters(name: string, lower: string): boolean {
  if (name.length !== lower.length) return false;
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    if ((code >= 0x41 && code <= 0x5a ? code | 0x20 : code) !== lower.charCodeAt(i)) return false;
  }
  return true;
}
