/**
 * The request-target that goes into the request-line: the path and query
 * exactly as they travel on the wire. A target given as a path is used
 * byte for byte (no re-encoding, no re-ordering of the query). An absolute
 * URL is reduced the way WHATWG `fetch` sends it (`pathname + search`),
 * because that, not the text the caller typed, is what the server sees.
 */
export type RequestTarget = {
  target: string;
  /** Set when an absolute URL was given and fetch would send something other than its raw text. */
  rewrittenFrom?: string;
};

export type RequestTargetResult = { ok: true; value: RequestTarget } | { ok: false; message: string };

export function requestTargetProblem(target: string): string | undefined {
  if (!target.startsWith("/")) return `the request target must start with "/", got ${JSON.stringify(target.slice(0, 60))}`;
  for (let i = 0; i < target.length; i++) {
    const code = target.charCodeAt(i);
    if (code === 0x23) return `the request target contains "#" at column ${i + 1}; fragments are never sent`;
    if (code <= 0x20 || code >= 0x7f) {
      return `the request target contains U+${code.toString(16).toUpperCase().padStart(4, "0")} at column ${i + 1}; percent-encode it as it will be sent`;
    }
  }
  return undefined;
}

export function resolveRequestTarget(url: string): RequestTargetResult {
  if (/^https?:\/\//i.test(url)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { ok: false, message: `${JSON.stringify(url.slice(0, 80))} is not a valid URL` };
    }
    const target = parsed.pathname + parsed.search;
    const afterAuthority = url.replace(/^https?:\/\/[^/?#]*/i, "").replace(/#.*$/s, "") || "/";
    return { ok: true, value: target === afterAuthority ? { target } : { target, rewrittenFrom: afterAuthority } };
  }
  const problem = requestTargetProblem(url);
  if (problem) return { ok: false, message: `${problem} (or pass an absolute http(s) URL)` };
  return { ok: true, value: { target: url } };
}

/** The path without the query: what the deprecated request-line form signed. */
export function withoutQuery(target: string): string | undefined {
  const q = target.indexOf("?");
  return q < 0 ? undefined : target.slice(0, q);
}
