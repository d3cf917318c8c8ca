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
 * A `fetch` that signs every request per spec §5.2. It signs what fetch
 * will actually send: the WHATWG-normalised `pathname + search` of the URL,
 * the upper-cased method (fetch itself leaves `patch` in lower case) and the
 * exact body bytes, which is why streamed bodies are refused.
 */
export function createSignedFetch(options: SignedFetchOptions): SignedFetch {
  registerSecret(options.secret);
  const doFetch = options.fetch ?? globalThis.fetch;
  const now = options.now ?? (() => new Date());

  return async (input, init = {}) => {
    if (typeof input !== "string" && !(input instanceof URL)) {
      throw new RelcastError("E_INPUT", "signed fetch takes a URL string or URL object, not a Request", "pass the URL and an init object");
    }
    const url = new URL(String(input));
    const method = (init.method ?? "GET").toUpperCase();
    const body = await bodyBytes(init.body);
    const signed = signRequest({
      clientId: options.clientId,
      secret: options.secret,
      method,
      url: url.pathname + url.search,
      date: now(),
      ...(body === undefined ? {} : { body }),
    });
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(signed.headers)) headers.set(name, value);
    return doFetch(url, { ...init, method, headers, ...(body === undefined ? {} : { body }) });
  };
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
