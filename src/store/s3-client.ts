import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { S3Client } from "@aws-sdk/client-s3";
import { CONNECT_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, MAX_ATTEMPTS, type S3StoreOptions } from "./s3-options.js";

/**
 * One configured client per store. Region, credentials and profile come from
 * the standard AWS provider chain unless the config names a region.
 */
export function createS3Client(options: S3StoreOptions): S3Client {
  // On Node < 22 every S3Client prints the SDK's NodeVersionSupportWarning
  // ("versions published after the first week of January 2027 will require
  // node >=22"). It is about SDK versions relcast does not install: package.json
  // pins the SDK to a release line whose engines accept relcast's own (Node 20.19+;
  // test/package/engines.test.ts checks every dependency's engines). The SDK's
  // documented switch turns the notice off unless the user set it themselves.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  const checksum = options.requestChecksumCalculation ?? "WHEN_SUPPORTED";
  return new S3Client({
    ...(options.region !== undefined && { region: options.region }),
    ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
    forcePathStyle: options.forcePathStyle ?? false,
    requestChecksumCalculation: checksum,
    // Reads are not checked against x-amz-checksum-* headers: relcast checks
    // what matters itself (SHA-256 of every artifact in verify, the catalog by
    // parsing), and S3-compatible servers disagree on the full-object checksum
    // of multipart objects (moto sends a wrong one; real S3 a composite one).
    responseChecksumValidation: "WHEN_REQUIRED",
    retryMode: "standard",
    maxAttempts: MAX_ATTEMPTS,
    // Without these a server that accepts and then stalls would hang the run forever.
    requestHandler: {
      requestTimeout: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      connectionTimeout: CONNECT_TIMEOUT_MS,
      throwOnRequestTimeout: true,
      // Our own keep-alive agents: with its default agents the SDK opens a new
      // connection, without keep-alive, for every request that carries
      // `Expect: 100-continue` (every multipart part), a TCP and server
      // set-up (a TLS handshake on S3) per 8 MiB. Measured through a
      // keep-alive proxy: 200 MB in 24 parts went from 25 connections to 7.
      httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 50 }),
      httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 50 }),
    },
  });
}
