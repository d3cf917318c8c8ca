import { readFileSync } from "node:fs";

/** Set by the Action's bundler, where no package.json sits beside the code. */
declare const RELCAST_BUNDLED_VERSION: string | undefined;

/** relcast's own version, from the package.json two folders above dist/src/core. */
export function packageVersion(): string {
  if (typeof RELCAST_BUNDLED_VERSION === "string") return RELCAST_BUNDLED_VERSION;
  const text = readFileSync(new URL("../../../package.json", import.meta.url), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}
