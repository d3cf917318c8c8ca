/**
 * The store URLs relcast opens: `file:///absolute/path`, `file://./relative`
 * (to the config's folder) or `s3://bucket[/prefix]`. One parser for the
 * store opener and for the config (and `relcast init`), so a config is
 * refused where it is written, not at the first command that opens it.
 * Messages print the URL with any password (and query) hidden.
 */
import { redactUrl } from "./redact-url.js";

export type StoreUrl =
  | { kind: "file"; absolute: string }
  | { kind: "file"; relative: string }
  | { kind: "s3"; bucket: string; prefix: string };

export const STORE_URL_HINT = "use file://./public-store, file:///absolute/path or s3://bucket[/prefix]";

/** S3 bucket names: 3-63 lower-case letters, digits, '.' and '-', starting and ending with a letter or digit. */
const S3_URL = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/;

export function parseStoreUrl(url: string): StoreUrl | { problem: string } {
  if (url.startsWith("file://")) {
    const rest = url.slice("file://".length);
    if (rest.startsWith("/")) return { kind: "file", absolute: rest };
    if (rest.startsWith("./") || rest.startsWith("../") || rest === ".") return { kind: "file", relative: rest };
    return { problem: `store URL "${redactUrl(url)}" has a host part: use file:///absolute/path or file://./relative/path` };
  }
  const s3 = S3_URL.exec(url);
  if (s3) return { kind: "s3", bucket: s3[1]!, prefix: (s3[2] ?? "").replace(/^\/+|\/+$/g, "") };
  if (url.startsWith("s3://")) return { problem: `store URL "${redactUrl(url)}" names no valid S3 bucket (3-63 lower-case letters, digits, '.' or '-'): ${STORE_URL_HINT}` };
  return { problem: `unsupported store URL "${redactUrl(url)}": ${STORE_URL_HINT}` };
}

/** Why `url` is no store relcast can open, or undefined. */
export function storeUrlProblem(url: string): string | undefined {
  const parsed = parseStoreUrl(url);
  return "problem" in parsed ? parsed.problem : undefined;
}
