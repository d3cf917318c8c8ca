import { S3Client } from "@aws-sdk/client-s3";
import { MAX_ATTEMPTS, type S3StoreOptions } from "./s3-options.js";

/**
 * One configured client per store. Region, credentials and profile come from
 * the standard AWS provider chain unless the config names a region.
 */
export function createS3Client(options: S3StoreOptions): S3Client {
  const checksum = options.requestChecksumCalculation ?? "WHEN_SUPPORTED";
  return new S3Client({
    ...(options.region !== undefined && { region: options.region }),
    ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
    forcePathStyle: options.forcePathStyle ?? false,
    // Providers that reject unsolicited CRC headers (R2, B2) usually also
    // return none, so response validation follows the same setting.
    requestChecksumCalculation: checksum,
    responseChecksumValidation: checksum,
    retryMode: "standard",
    maxAttempts: MAX_ATTEMPTS,
  });
}
