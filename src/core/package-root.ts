import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

let root: string | undefined;

/**
 * The package root (holds package.json and templates/): the first
 * folder above this module with a package.json. The same walk works from
 * src/ (tests), dist/src/ (the npm package) and action/dist/ (the Action's
 * bundle, run from a checkout of the repository).
 */
export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, "package.json"))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error("relcast bug: package.json not found above its own code");
    dir = up;
  }
  root = dir;
  return dir;
}
