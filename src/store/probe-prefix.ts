/**
 * Where the S3 store's start-of-run probe of conditional writes puts its objects (relative to the store's prefix).
 * Its own file, without the AWS SDK, so that `verify` can name such leftovers on any store without loading the SDK
 * (importing it from the probe's module pulled the whole SDK into every verify run: about 0.15 s of CPU per run).
 */
export const PROBE_PREFIX = ".relcast/probe/";
