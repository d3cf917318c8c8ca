import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";

/**
 * The full path of an executable `name` found on PATH, as a shell would run
 * it, or undefined. Used to pick an external program (xz, bzip2) only where
 * one is present; relcast never needs one.
 */
export function commandOnPath(name: string, searchPath: string | undefined = process.env.PATH): string | undefined {
  for (const dir of (searchPath ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
