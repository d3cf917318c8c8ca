import { loadConfig, type ConfigOverrides } from "../config/load-config.js";
import type { RelcastConfig } from "../config/schema.js";
import type { ObjectStore } from "../store/object-store.js";
import { openStore, type StoreSettings } from "../store/open-store.js";

/**
 * Config file plus flag overrides, and the store it names. A relative
 * `file://./x` resolves against the config file's folder when it comes from
 * the file, and against the working directory when it comes from --store.
 */
export async function withConfiguredStore<T>(
  flags: { config?: string | undefined; store?: string | undefined },
  overrides: Omit<ConfigOverrides, "store">,
  settings: Omit<StoreSettings, "s3">,
  fn: (config: RelcastConfig, store: ObjectStore) => Promise<T>,
): Promise<T> {
  const config = await loadConfig(flags.config, { ...overrides, store: flags.store });
  const store = await openStore(config.store, flags.store ? process.cwd() : config.baseDir, { ...settings, s3: config.s3 });
  try {
    return await fn(config, store);
  } finally {
    await store.close?.();
  }
}
