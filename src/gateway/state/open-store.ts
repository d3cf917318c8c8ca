import type { Clock } from "../clock.js";
import { isPostgresUrl, openPostgresDriver } from "./postgres-driver.js";
import { openSqliteDriver } from "./sqlite-driver.js";
import { TokenStore } from "./token-store.js";

/**
 * `--db` / `database`: a `postgres://` (or `postgresql://`) URL shares the
 * state between instances; anything else is a SQLite file (the embedded
 * default).
 */
export async function openTokenStore(location: string, clock: Clock): Promise<TokenStore> {
  const driver = isPostgresUrl(location) ? await openPostgresDriver(location) : await openSqliteDriver(location);
  return new TokenStore(driver, clock);
}
