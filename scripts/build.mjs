// `npm run build`: dist/ (tsc) and the Action bundle (scripts/build-action.mjs),
// safe to run while tests read dist/ and while another build runs in the same
// checkout (two `npm test` at once):
// - one build at a time per checkout (a lock folder holding the owner's pid; a dead owner's lock is taken over);
// - tsc writes into a staging folder, and each output file moves into place by
//   rename only if its bytes changed, so a reader sees the old file or the new
//   one, never half of one, and a rebuild of unchanged sources writes nothing;
// - `--if-stale` builds only when a source is newer than the last build
//   (the test global setup uses it: `npx vitest run <file>` after an edit).
import { execFileSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, readdir, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { withCheckoutLock } from "./checkout-lock.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const CACHE = path.join(ROOT, "node_modules", ".cache");
/** Touched at the end of a build with the time the build started: sources newer than it are not in dist/. */
const STAMP = path.join(ROOT, "dist", ".build-stamp");
const INPUTS = ["src", "tsconfig.json", "tsconfig.build.json", "package.json", "package-lock.json", "scripts/build.mjs", "scripts/build-action.mjs"];

async function newestMtime(p) {
  const st = await stat(p).catch(() => undefined);
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs; // a deleted file changes its folder's mtime
  for (const e of await readdir(p)) newest = Math.max(newest, await newestMtime(path.join(p, e)));
  return newest;
}

async function isStale() {
  const built = await stat(STAMP).then((s) => s.mtimeMs, () => 0);
  const sources = Math.max(...(await Promise.all(INPUTS.map((i) => newestMtime(path.join(ROOT, i))))));
  return built < sources;
}

/** Moves every file of `from` to the same place under `to` when its bytes differ; returns how many moved. */
async function install(from, to) {
  await mkdir(to, { recursive: true });
  let moved = 0;
  for (const e of await readdir(from, { withFileTypes: true })) {
    const src = path.join(from, e.name);
    const dest = path.join(to, e.name);
    if (e.isDirectory()) {
      moved += await install(src, dest);
      continue;
    }
    const [fresh, current] = await Promise.all([readFile(src), readFile(dest).catch(() => undefined)]);
    if (current?.equals(fresh)) continue;
    await rename(src, dest);
    moved++;
  }
  return moved;
}

async function build() {
  const started = new Date();
  // tsc's output goes to a sibling of dist/: the source maps' relative paths to src/ are then the ones dist/ needs.
  const out = await mkdtemp(path.join(ROOT, ".dist-staging-"));
  const action = await mkdtemp(path.join(CACHE, "relcast-build-action-"));
  try {
    execFileSync(process.execPath, [path.join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json", "--outDir", out], { cwd: ROOT, stdio: "inherit" });
    await chmod(path.join(out, "src", "cli", "main.js"), 0o755);
    execFileSync(process.execPath, [path.join(ROOT, "scripts", "build-action.mjs"), path.join(action, "index.mjs")], { cwd: ROOT, stdio: "inherit" });
    const moved = (await install(out, path.join(ROOT, "dist"))) + (await install(action, path.join(ROOT, "action", "dist")));
    await writeFile(STAMP, "");
    await utimes(STAMP, started, started);
    console.error(`build: ${moved} file(s) changed`);
  } finally {
    await rm(out, { recursive: true, force: true });
    await rm(action, { recursive: true, force: true });
  }
}

const ifStale = process.argv.includes("--if-stale");
await withCheckoutLock("build", async () => {
  if (ifStale && !(await isStale())) return;
  await build();
});
