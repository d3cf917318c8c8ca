import path from "node:path";
import { fileURLToPath } from "node:url";
import { RelcastError } from "../core/errors.js";
import { redactUrl } from "../core/redact-url.js";
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
  if (url.startsWith("file://")) {
    const rest = url.slice("file://".length);
    if (rest.startsWith("/")) return createFolderStore(fileURLToPath(`file://${rest}`));
    if (rest.startsWith("./") || rest.startsWith("../") || rest === ".") return createFolderStore(path.resolve(baseDir, rest));
    throw new RelcastError("E_CONFIG", `store URL "${redactUrl(url)}" has a host part`, "use file:///absolute/path or file://./relative/path");
  }
  const s3 = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (s3) {
    if (!s3Factory) {
      // Loaded lazily: the SDK is only needed for S3 stores.
      const factoryModule = "./s3-store-factory.js";
      await import(factoryModule);
    }
    if (!s3Factory) throw new RelcastError("E_STORE", "this build of relcast has no S3 store", "reinstall relcast");
    const prefix = (s3[2] ?? "").replace(/^\/+|\/+$/g, "");
    return s3Factory({ bucket: s3[1]!, prefix, settings });
  }
  throw new RelcastError(
    "E_CONFIG",
    `unsupported store URL "${redactUrl(url)}"`,
    "use file://./public-store, file:///absolute/path or s3://bucket[/prefix]",
  );
}
