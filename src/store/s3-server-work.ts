/**
 * A request the server answers only once it has done work that grows with
 * the bytes (a copy; the join of a multipart upload's parts) sends nothing
 * meanwhile, so the idle timeout that guards every request
 * (s3.requestTimeoutMs) is lengthened for it: the store's timeout plus a
 * second for every 16 MiB, a floor of 16 MiB/s under the server.
 *
 * Abandoning such a request early is worse than slow: the SDK sends it
 * again while the server still works on the first. moto copied 2 GiB in
 * over 30 s on a busy machine, and took over 60 s to join the parts of a
 * 2 GiB upload; a second CompleteMultipartUpload of the same upload sent
 * meanwhile made both fail with HTTP 500 and lost the upload (moto 5.2.1),
 * which is how the 2 GiB publish of the bench failed.
 */
const FLOOR_BYTES_PER_SECOND = 16 * 1024 * 1024;

export function serverWorkTimeout(base: number, bytes: number): { requestTimeout: number } {
  return { requestTimeout: base + Math.ceil((bytes / FLOOR_BYTES_PER_SECOND) * 1000) };
}
