import { isIP } from "node:net";

/**
 * Without a configured `issuer` the gateway names itself after each
 * request's Host: the RFC 8414 metadata, its endpoint URLs and the RFC 9207
 * `iss` of every authorization answer. On loopback only the local machine
 * can choose that Host; beyond it anyone can, so `relcast gateway` warns
 * (it does not refuse: a gateway behind a reverse proxy that sets Host
 * still works, and every Host-made answer is `no-store`, discovery.ts).
 */
export function unpinnedIssuerWarning(options: { issuer: string | undefined; host: string; servesAuth: boolean; source: string }): string | undefined {
  if (options.issuer !== undefined || !options.servesAuth || isLoopback(options.host)) return undefined;
  return (
    `gateway: ${options.source} has no \`issuer\` and the gateway listens on ${options.host}: the OAuth metadata, its endpoint URLs ` +
    "and the `iss` of authorization answers follow each request's Host header (served no-store). " +
    'Set `issuer` to the public base URL, for example "https://gateway.example.com"'
  );
}

export function isLoopback(host: string): boolean {
  const address = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (address.toLowerCase() === "localhost") return true;
  if (isIP(address) === 4) return address.startsWith("127.");
  if (isIP(address) === 6) return address === "::1" || /^(0{1,4}:){7}0{0,3}1$/.test(address) || /^::ffff:127\./i.test(address);
  return false;
}
