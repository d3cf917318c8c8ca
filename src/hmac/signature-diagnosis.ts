import { computeSignature, signaturesEqual } from "./signing-string.js";

/**
 * When a signature does not match, try the mistakes integrators make most
 * and name the one that reproduces the signature. Each guess needs the
 * secret, so a guess that matches proves the caller holds it; nothing about
 * the secret or the expected signature leaks through the answer.
 */
type Guess = { mistake: string; signingString: (date: string, method: string, target: string) => string };

const GUESSES: readonly Guess[] = [
  { mistake: "signed HTTP/1.0 in the request-line; always write HTTP/1.1", signingString: (d, m, t) => `date: ${d}\n${m} ${t} HTTP/1.0` },
  { mistake: "signed HTTP/2.0 in the request-line; always write HTTP/1.1", signingString: (d, m, t) => `date: ${d}\n${m} ${t} HTTP/2.0` },
  { mistake: "signed HTTP/2 in the request-line; always write HTTP/1.1", signingString: (d, m, t) => `date: ${d}\n${m} ${t} HTTP/2` },
  { mistake: "signed the method in lower case", signingString: (d, m, t) => `date: ${d}\n${m.toLowerCase()} ${t} HTTP/1.1` },
  { mistake: 'wrote "Date:" with a capital D; the first line starts with "date: "', signingString: (d, m, t) => `Date: ${d}\n${m} ${t} HTTP/1.1` },
  { mistake: 'left out the space after "date:"', signingString: (d, m, t) => `date:${d}\n${m} ${t} HTTP/1.1` },
  { mistake: "joined the lines with CRLF; use a single \\n", signingString: (d, m, t) => `date: ${d}\r\n${m} ${t} HTTP/1.1` },
  { mistake: "added a trailing newline; the signing string ends after HTTP/1.1", signingString: (d, m, t) => `date: ${d}\n${m} ${t} HTTP/1.1\n` },
  { mistake: "signed the request-line before the date line", signingString: (d, m, t) => `${m} ${t} HTTP/1.1\ndate: ${d}` },
  { mistake: "signed the percent-decoded path/query; sign them exactly as sent", signingString: (d, m, t) => `date: ${d}\n${m} ${safeDecode(t)} HTTP/1.1` },
];

function safeDecode(target: string): string {
  try {
    return decodeURIComponent(target);
  } catch {
    return target;
  }
}

export function diagnoseSignature(secret: string, provided: string, date: string, method: string, target: string): string | undefined {
  for (const guess of GUESSES) {
    if (signaturesEqual(computeSignature(secret, guess.signingString(date, method, target)), provided)) return guess.mistake;
  }
  if (signaturesEqual(computeSignature(secret.trim(), `date: ${date}\n${method} ${target} HTTP/1.1`), provided) && secret.trim() !== secret) {
    return "used the secret without its surrounding whitespace";
  }
  return undefined;
}
