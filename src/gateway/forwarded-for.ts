import { BlockList, isIP } from "node:net";
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";

/**
 * Who called, as the upstream should hear it. The peer address comes from
 * the socket; a client's own `X-Forwarded-For` / `X-Forwarded-Proto` are
 * believed only when the peer is one of the configured trusted proxies
 * (`trustedProxies`: addresses or CIDR ranges), and then extended with the
 * peer, as every proxy in a chain does.
 */
export interface ForwardingRules {
  /** The X-Forwarded-For value to send upstream. */
  forwardedFor(req: IncomingMessage): string | undefined;
  /** Whether the original request came over HTTPS (TLS here, or a trusted proxy says so). */
  isHttps(req: IncomingMessage): boolean;
}

export function parseTrustedProxy(entry: string): { address: string; prefix?: number } | undefined {
  const [address, prefixText, extra] = entry.split("/");
  if (!address || extra !== undefined) return undefined;
  const family = isIP(address);
  if (family === 0) return undefined;
  if (prefixText === undefined) return { address };
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  return prefix <= (family === 4 ? 32 : 128) ? { address, prefix } : undefined;
}

export function forwardingRules(trustedProxies: readonly string[]): ForwardingRules {
  const list = new BlockList();
  for (const entry of trustedProxies) {
    const parsed = parseTrustedProxy(entry);
    if (!parsed) throw new Error(`not an IP address or CIDR range: ${entry}`);
    const family = isIP(parsed.address) === 4 ? "ipv4" : "ipv6";
    if (parsed.prefix === undefined) list.addAddress(parsed.address, family);
    else list.addSubnet(parsed.address, parsed.prefix, family);
  }
  const trusted = (peer: string | undefined): boolean => {
    if (!peer || trustedProxies.length === 0) return false;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(peer)?.[1];
    return mapped ? list.check(mapped, "ipv4") || list.check(peer, "ipv6") : list.check(peer, isIP(peer) === 4 ? "ipv4" : "ipv6");
  };
  return {
    forwardedFor(req) {
      const peer = req.socket.remoteAddress;
      if (!peer) return undefined;
      const claimed = req.headers["x-forwarded-for"];
      return claimed && trusted(peer) ? `${claimed}, ${peer}` : peer;
    },
    isHttps(req) {
      if ((req.socket as TLSSocket).encrypted === true) return true;
      return trusted(req.socket.remoteAddress) && req.headers["x-forwarded-proto"] === "https";
    },
  };
}
