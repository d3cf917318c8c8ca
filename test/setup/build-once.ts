import { execFileSync } from "node:child_process";
import path from "node:path";

/**
 * Global setup: brings dist/ up to date once, before any test file runs
 * (scripts/build.mjs --if-stale: nothing happens unless a source is newer
 * than the last build). Test files never rebuild themselves: tsc rewriting
 * dist/ while another file runs the CLI would be a race. The build takes a
 * per-checkout lock and moves each changed file into place by rename, so a
 * second `npm test` in the same checkout never reads a half-written module.
 */
const ROOT = path.resolve(import.meta.dirname, "..", "..");

export default function setup(): void {
  execFileSync(process.execPath, [path.join(ROOT, "scripts", "build.mjs"), "--if-stale"], { cwd: ROOT, stdio: "inherit" });
}
