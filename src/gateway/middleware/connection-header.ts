import type { IncomingMessage } from "node:http";
import { comparableName } from "../header-names.js";
import { HttpError } from "../http/http-error.js";

/**
 * A `Connection` header lists the headers meant for the next hop only
 * (RFC 9110 §7.6.1), and a proxy drops what it lists. Naming a header that
 * frames the request or carries or is covered by its credentials there has
 * no honest use and one dishonest one: to make the gateway read a request
 * one way and forward it another (the body unframed after a GET, a signed
 * header missing upstream). Such a request is refused with 400 on every
 * route, before anything reads it, and the connection closed.
 */
const NOT_HOP_BY_HOP = new Set(["content-length", "transfer-encoding", "host", "authorization", "date", "digest"]);

/** Synchronous; run by the gateway's one global middleware (server.ts). Reads every Connection line (node keeps only some repeated headers). */
export function checkConnectionHeader(req: IncomingMessage): void {
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length !== 10 || name.toLowerCase() !== "connection") continue;
    const value = raw[i + 1]!;
    if (value === "keep-alive" || value === "close") continue;
    for (const token of value.split(",")) {
      const named = comparableName(token.trim().toLowerCase());
      if (NOT_HOP_BY_HOP.has(named)) {
        throw new HttpError(400, "invalid_request", `the Connection header must not name ${named}: it frames or authenticates the request; list only hop-by-hop headers there`, { connection: "close" });
      }
    }
  }
}
