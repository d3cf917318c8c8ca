import { prepareHmacKeys, verifyRequestSync } from "../hmac/index.js";
import type { HmacVerifier } from "./hmac-verifier.js";

/**
 * Adapter to the HMAC kit (src/hmac). The kit's synchronous verifier (the
 * secrets are configuration, in memory) already has the shape the gateway
 * expects, and its keyed-state table prepares the gateway's secrets; this
 * file is the one place that says so, and the compiler checks it.
 */
export const kitVerifier: HmacVerifier = Object.assign((input: Parameters<typeof verifyRequestSync>[0]) => verifyRequestSync(input), { prepareSecrets: prepareHmacKeys });
