import { RelcastError } from "../core/errors.js";
import { registerSecret } from "../core/secrets.js";
import { signRequest } from "./sign-request.js";

export type SignedFetchOptions = {
  clientId: string;
  secret: string;
  /** The fetch to wrap; defaults to the global one. */
  fetch?: typeof fetch;
  /** Clock for the Date header; defaults to the system clock. */
  now?: () => Date;
};

export type SignedFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A `fetch` that signs every request (HMAC scheme: docs/hmac.md). It signs what fetch
 * will actually send: the WHATWG-normalised `pathname + search` of the URL,
 * the upper-cased method (fetch itself leaves `patch` in lower case) and the
 * exact body bytes, which is why streamed bodies are refused.
 *
 * A gateway that refuses replays (relcast's: docs/hmac.md, "Replays")
 * accepts the signature of a request with a method other than GET, HEAD
 * and OPTIONS once, and two such requests with the same method and target
 * signed in the same second have the same signature. So this fetch signs
 * each of them with a second it has not used for that method and target,
 * waiting for the next second when the current one is taken.
 */
export function createSignedFetch(options: SignedFetchOptions): SignedFetch {
  registerSecret(options.secret);
  const doFetch = options.fetch ?? globalThis.fetch;
  const now = options.now ?? (() => new Date());
  const seconds = new SecondsInUse();

  return async (input, init = {}) => {
    if (typeof input !== "string" && !(input instanceof URL)) {
      throw new RelcastError("E_INPUT", "signed fetch takes a URL string or URL object, not a Request", "pass the URL and an init object");
    }
    const url = new URL(String(input));
    const method = (init.method ?? "GET").toUpperCase();
    const body = await bodyBytes(init.body);
    const target = url.pathname + url.search;
    const signed = signRequest({
      clientId: options.clientId,
      secret: options.secret,
      method,
      url: target,
      date: REPEATABLE.has(method) ? now() : await seconds.take(`${method} ${target}`, now()),
      ...(body === undefined ? {} : { body }),
    });
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(signed.headers)) headers.set(name, value);
    return doFetch(url, { ...init, method, headers, ...(body === undefined ? {} : { body }) });
  };
}

/** The methods a gateway may accept again with the same signature (the safe ones a gateway lets through repeatedly). */
const REPEATABLE = new Set(["GET", "HEAD", "OPTIONS"]);

/** For each method and target, the last second a request was signed with. */
class SecondsInUse {
  private readonly last = new Map<string, number>();

  /** A Date in a second not used for `key` yet, reserved for it: `now`, or a later second once the clock has reached it. */
  async take(key: string, now: Date): Promise<Date> {
    const current = Math.floor(now.getTime() / 1000);
    const previous = this.last.get(key);
    const second = previous === undefined ? current : Math.max(current, previous + 1);
    if (this.last.size >= 1024) for (const [k, s] of this.last) if (s < current) this.last.delete(k);
    this.last.set(key, second); // reserved before any wait, so concurrent requests get distinct seconds
    if (second === current) return now;
    await new Promise((resolve) => setTimeout(resolve, second * 1000 - now.getTime()));
    return new Date(second * 1000);
  }
}

async function bodyBytes(body: RequestInit["body"]): Promise<string | Uint8Array<ArrayBuffer> | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
  if (body instanceof Blob) return new Uint8Array(await body.arrayBuffer());
  throw new RelcastError(
    "E_INPUT",
    "signed fetch needs the body as a string, bytes or Blob to compute its Digest",
    "serialise the body first (streams, FormData and URLSearchParams have no fixed bytes until sent)",
  );
}
