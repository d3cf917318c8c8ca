import type { IncomingMessage, RequestListener } from "node:http";

/**
 * A request that asks to switch protocols (`Connection: upgrade` with an
 * `Upgrade` header, RFC 9110 §7.8) is answered as a plain request: the
 * gateway upgrades nothing. node's parser, though, stops reading the
 * connection at such a request's end, so whatever the client pipelined
 * behind it is never handled, and node's answer still said keep-alive.
 * A client then waited for answers that could not come, or, reading the
 * close as a lost answer, sent a non-idempotent request again without
 * knowing whether it ran. Here the answer to such a request says
 * `Connection: close`, so the client knows that nothing behind it was
 * read and sends it again on a new connection.
 */
export function closeAfterUpgradeAsk(listener: RequestListener): RequestListener {
  return (req, res) => {
    if (asksUpgrade(req)) res.shouldKeepAlive = false;
    listener(req, res);
  };
}

/** What node's parser treats as an upgrade: an Upgrade header and the `upgrade` token in a Connection line (any line, any case). */
export function asksUpgrade(req: IncomingMessage): boolean {
  if (req.headers.upgrade === undefined) return false;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== "connection") continue;
    if (raw[i + 1]!.split(",").some((token) => token.trim().toLowerCase() === "upgrade")) return true;
  }
  return false;
}
