import { readFile } from "node:fs/promises";
import { RelcastError } from "../core/errors.js";
import { registerSecret } from "../core/secrets.js";
import { parseHttpDate } from "../core/http-date.js";
import type { RequestHeaders } from "./verify-result.js";

/**
 * Reading what `relcast hmac sign|verify` are given on the command line:
 * secret and body files, `Name: value` header lines, an HTTP-date clock.
 */
export async function readSecretFile(path: string): Promise<string> {
  const text = await readInput(path, "secret file", "utf8");
  // One trailing line break is how editors and `echo` end files; it is not part of the secret.
  const secret = text.replace(/\r?\n$/, "");
  if (secret.length === 0) throw new RelcastError("E_INPUT", `secret file ${path} is empty`, "put the CLIENT_SECRET in the file");
  registerSecret(secret);
  return secret;
}

export async function readBodyFile(path: string): Promise<Buffer> {
  return readInput(path, "body file");
}

async function readInput(path: string, what: string): Promise<Buffer>;
async function readInput(path: string, what: string, encoding: "utf8"): Promise<string>;
async function readInput(path: string, what: string, encoding?: "utf8"): Promise<Buffer | string> {
  try {
    return encoding ? await readFile(path, encoding) : await readFile(path);
  } catch (err) {
    const reason = err instanceof Error && "code" in err ? String(err.code) : String(err);
    throw new RelcastError("E_INPUT", `cannot read ${what} ${path} (${reason})`, `check the --${what.replace(" ", "-")} path`);
  }
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** `--header 'Name: value'` lines to a lower-case header map; repeated names become arrays. */
export function parseHeaderLines(lines: readonly string[]): RequestHeaders {
  const headers: Record<string, string | string[]> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    const name = colon < 0 ? "" : line.slice(0, colon).trim().toLowerCase();
    if (!TOKEN.test(name)) {
      throw new RelcastError("E_USAGE", `--header ${JSON.stringify(line.slice(0, 80))} is not "Name: value"`, "for example --header 'Date: Tue, 07 Jan 2025 10:00:00 GMT'");
    }
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
    const previous = headers[name];
    headers[name] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  return headers;
}

export function parseClockOption(value: string, flag: string): Date {
  const parsed = parseHttpDate(value);
  if (!parsed.ok) throw new RelcastError("E_USAGE", `${flag} ${JSON.stringify(value)} ${parsed.reason}`, "for example 'Tue, 07 Jan 2025 10:00:00 GMT'");
  return parsed.date;
}

export function parseMethodOption(value: string): string {
  if (!TOKEN.test(value)) throw new RelcastError("E_USAGE", `--method ${JSON.stringify(value)} is not an HTTP method`, "for example --method POST");
  return value.toUpperCase();
}
