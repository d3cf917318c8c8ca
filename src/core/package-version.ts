import { readFileSync } from "node:fs";
import path from "node:path";
import { packageRoot } from "./package-root.js";

/** relcast's own version, from its package.json. */
export function packageVersion(): string {
  const text = readFileSync(path.join(packageRoot(), "package.json"), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}
