import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";

/**
 * Global setup: builds dist/ once, before any test file runs, when a source
 * file is newer than the build (`npm test` has just built, so this is for
 * `npx vitest run <file>`). Test files never rebuild themselves: tsc
 * rewriting dist/ while another file runs the CLI would be a race.
 */
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const ENTRY = path.join(ROOT, "dist", "src", "cli", "main.js");

function newestMtime(folder: string): number {
  let newest = 0;
  for (const e of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) newest = Math.max(newest, statSync(path.join(e.parentPath, e.name)).mtimeMs);
  }
  return newest;
}

export default function setup(): void {
  let built = 0;
  try {
    built = statSync(ENTRY).mtimeMs;
  } catch {
    // not built yet
  }
  const sources = Math.max(newestMtime(path.join(ROOT, "src")), statSync(path.join(ROOT, "tsconfig.build.json")).mtimeMs);
  if (built >= sources) return;
  execFileSync("npm", ["run", "build", "--silent"], { cwd: ROOT, stdio: "inherit" });
}
