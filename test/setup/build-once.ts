import { execFileSync } from "node:child_process";
import { stat } from "node:fs/promises";
import path from "node:path";
import { walkFiles } from "../helpers/walk-files.js";

/**
 * Global setup: builds dist/ once, before any test file runs, when a source
 * file is newer than the build (`npm test` has just built, so this is for
 * `npx vitest run <file>`). Test files never rebuild themselves: tsc
 * rewriting dist/ while another file runs the CLI would be a race.
 */
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const ENTRY = path.join(ROOT, "dist", "src", "cli", "main.js");

async function newestMtime(folder: string): Promise<number> {
  let newest = 0;
  for await (const file of walkFiles(folder)) newest = Math.max(newest, (await stat(file)).mtimeMs);
  return newest;
}

export default async function setup(): Promise<void> {
  const built = await stat(ENTRY).then((s) => s.mtimeMs, () => 0); // 0: not built yet
  const sources = Math.max(await newestMtime(path.join(ROOT, "src")), (await stat(path.join(ROOT, "tsconfig.build.json"))).mtimeMs);
  if (built >= sources) return;
  execFileSync("npm", ["run", "build", "--silent"], { cwd: ROOT, stdio: "inherit" });
}
