import path from "node:path";
import { fileURLToPath } from "node:url";
import { RelcastError } from "../core/errors.js";
import { parseStoreUrl, STORE_URL_HINT } from "../core/store-url.js";
import { createFolderStore } from "./folder-store.js";
import type { ObjectStore } from "./object-store.js";

export interface StoreSettings {
  s3?: {
    region?: string | undefined;
    endpoint?: string | undefined;
    forcePathStyle?: boolean | undefined;
    requestChecksumCalculation?: "WHEN_SUPPORTED" | "WHEN_REQUIRED" | undefined;
    requestTimeoutMs?: number | undefined;
    uploadConcurrency?: number | undefined;
    partSizeMiB?: number | undefined;
    conditionalWrites?: "prove" | "unverified-single-writer" | undefined;
  } | undefined;
  onProgress?: (loaded: number, total: number | undefined, key: string) => void;
  /** Warnings of the store itself (an S3 store's conditional-write opt-out); default stderr. */
  onWarning?: (message: string) => void;
}

export type S3StoreFactory = (options: {
  bucket: string;
  prefix: string;
  settings: StoreSettings;
}) => Promise<ObjectStore>;

let s3Factory: S3StoreFactory | undefined;

/** The S3 store registers itself here so the AWS SDK loads only when an s3:// URL is used. */
export function registerS3StoreFactory(factory: S3StoreFactory): void {
  s3Factory = factory;
}

/**
 * `file:///abs`, `file://./rel` (relative to baseDir) or `s3://bucket[/prefix]`.
 */
export async function openStore(url: string, baseDir: string, settings: StoreSettings = {}): Promise<ObjectStore> {
  const parsed = parseStoreUrl(url);
  if ("problem" in parsed) throw new RelcastError("E_CONFIG", parsed.problem.split(": use")[0]!, STORE_URL_HINT);
  if (parsed.kind === "file") {
    if ("absolute" in parsed) return createFolderStore(fileURLToPath(`file://${parsed.absolute}`));
    return createFolderStore(path.resolve(baseDir, parsed.relative));
  }
  if (!s3Factory) {
    // Loaded lazily: the SDK is only needed for S3 stores.
    const factoryModule = "./s3-store-factory.js";
    await import(factoryModule);
  }
  if (!s3Factory) throw new RelcastError("E_STORE", "this build of relcast has no S3 store", "reinstall relcast");
  return s3Factory({ bucket: parsed.bucket, prefix: parsed.prefix, settings });
}
