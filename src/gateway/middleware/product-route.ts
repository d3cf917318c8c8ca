import type { ProductConfig } from "../config-schema.js";
import { HttpError } from "../http/http-error.js";
import type { IncomingMessage } from "node:http";
import { rawTarget, type Middleware, type ProductTarget } from "../http/middleware.js";

/**
 * Resolves `/v2/<product>/<version>/<resource path>` (spec §9) to the
 * product's upstream. The path the gateway authorizes must be the path the
 * upstream serves, whatever the upstream's URL rules: dot segments (plain
 * or encoded), any encoded dot, slash or backslash, `;` path parameters
 * (servlet containers strip them), empty segments and backslashes are
 * refused with 400, never forwarded.
 */
const UNSAFE_PATH = /(^|\/)\.{1,2}(\/|$)|%2e|%2f|%5c|\\|;|\/\//i;
const VERSION = /^v\d+$/;

export function productRoute(products: Readonly<Record<string, ProductConfig>>): Middleware {
  const resolve = productResolver(products);
  return async (c, next) => {
    c.set("product", resolve(c.env.incoming));
    await next();
  };
}

/** The resolution itself, on node's request, for the HMAC fast path too (hmac-fast-path.ts). */
export function productResolver(products: Readonly<Record<string, ProductConfig>>): (incoming: IncomingMessage) => ProductTarget {
  const upstreams = new Map(Object.entries(products).map(([name, p]) => [name, new URL(p.upstream)]));
  return (incoming) => {
    const target = rawTarget(incoming);
    const q = target.indexOf("?");
    const path = q < 0 ? target : target.slice(0, q);
    const query = q < 0 ? "" : target.slice(q);
    if (!path.startsWith("/") || UNSAFE_PATH.test(path)) {
      throw new HttpError(400, "invalid_request", "the path must not contain `.`/`..` segments, `;` parameters, empty segments, encoded dots or slashes, or backslashes");
    }
    const [gatewayVersion, name, productVersion] = leadingSegments(path);
    const config = name === undefined ? undefined : products[name];
    const upstream = name === undefined ? undefined : upstreams.get(name);
    if (gatewayVersion !== "v2" || !config || !upstream || !productVersion || !VERSION.test(productVersion)) {
      throw new HttpError(404, "not_found", "no product route here; product paths look like /v2/<product>/v1/<resource>");
    }
    return {
      name: name!,
      upstream,
      auth: config.auth,
      timeoutMs: config.timeoutMs,
      upstreamTarget: path.slice("/v2/".length + name!.length) + query,
    };
  };
}

/** The first three segments of a path starting with "/", as `path.split("/").slice(1, 4)` has them, without splitting all of it (this runs on every product call). */
function leadingSegments(path: string): (string | undefined)[] {
  const segments: (string | undefined)[] = [undefined, undefined, undefined];
  let start = 1;
  for (let k = 0; k < 3 && start <= path.length; k++) {
    const end = path.indexOf("/", start);
    segments[k] = path.slice(start, end < 0 ? path.length : end);
    start = end < 0 ? path.length + 1 : end + 1;
  }
  return segments;
}
