// `npm run build`: dist/ (tsc: the library and its declarations), the
// `relcast` binary's bundle (dist/cli/relcast.mjs and its chunks) and the
// Action's bundle (action/dist/index.mjs; both bundles: scripts/bundle.mjs),
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
import { bundleAction, bundleCli } from "./bundle.mjs";
import { withCheckoutLock } from "./checkout-lock.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const CACHE = path.join(ROOT, "node_modules", ".cache");
/** Touched at the end of a build with the time the build started: sources newer than it are not in dist/. */
const STAMP = path.join(ROOT, "dist", ".build-stamp");
const INPUTS = ["src", "tsconfig.json", "tsconfig.build.json", "package.json", "package-lock.json", "scripts/build.mjs", "scripts/bundle.mjs"];

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

/**
 * The binary's bundle into dist/cli: chunks first (their names carry a hash
 * of their content, so a new chunk never replaces one an older entry still
 * loads), then the entry by rename; then chunks no entry of this build uses
 * are removed. Returns how many files changed.
 */
async function installCli(staging) {
  const [entry, ...chunks] = await bundleCli();
  const dest = path.join(ROOT, "dist", "cli");
  await mkdir(path.join(staging, "chunks"), { recursive: true });
  await mkdir(path.join(dest, "chunks"), { recursive: true });
  let moved = 0;
  for (const file of [...chunks, entry]) {
    const target = path.join(dest, file.fileName);
    if ((await readFile(target, "utf8").catch(() => undefined)) === file.code) continue;
    const staged = path.join(staging, file.fileName);
    await writeFile(staged, file.code, { mode: file === entry ? 0o755 : 0o644 });
    await rename(staged, target);
    moved++;
  }
  const wanted = new Set(chunks.map((c) => path.basename(c.fileName)));
  for (const name of await readdir(path.join(dest, "chunks"))) if (!wanted.has(name)) await rm(path.join(dest, "chunks", name), { force: true });
  return moved;
}

async function build() {
  const started = new Date();
  // tsc's output goes to a sibling of dist/: the source maps' relative paths to src/ are then the ones dist/ needs.
  const out = await mkdtemp(path.join(ROOT, ".dist-staging-"));
  const action = await mkdtemp(path.join(CACHE, "relcast-build-action-"));
  const cli = await mkdtemp(path.join(CACHE, "relcast-build-cli-"));
  try {
    execFileSync(process.execPath, [path.join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json", "--outDir", out], { cwd: ROOT, stdio: "inherit" });
    await chmod(path.join(out, "src", "cli", "main.js"), 0o755);
    await writeFile(path.join(action, "index.mjs"), (await bundleAction()).code);
    const moved = (await install(out, path.join(ROOT, "dist"))) + (await installCli(cli)) + (await install(action, path.join(ROOT, "action", "dist")));
    await writeFile(STAMP, "");
    await utimes(STAMP, started, started);
    console.error(`build: ${moved} file(s) changed`);
  } finally {
    await rm(out, { recursive: true, force: true });
    await rm(action, { recursive: true, force: true });
    await rm(cli, { recursive: true, force: true });
  }
}

const ifStale = process.argv.includes("--if-stale");
await withCheckoutLock("build", async () => {
  if (ifStale && !(await isStale())) return;
  await build();
});
