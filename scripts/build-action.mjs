// Bundles the GitHub Action (src/action/index.ts) into one file,
// action/dist/index.mjs, which action.yml runs on the runner's Node 24.
// The bundle is committed: a workflow that uses the Action downloads the
// repository at the pinned ref and runs this file; nothing is installed at
// run time. `npm run build` runs this, CI checks the committed file is current.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { build } from "rolldown";

const root = path.resolve(import.meta.dirname, "..");
const outFile = process.argv[2] ?? path.join(root, "action", "dist", "index.mjs");

const result = await build({
  cwd: root,
  input: path.join(root, "src", "action", "index.ts"),
  platform: "node",
  // Only what the publish command reaches; better-sqlite3 (gateway) is never imported.
  external: [/^node:/],
  logLevel: "warn",
  write: false,
  output: { format: "esm", codeSplitting: false, comments: { legal: false, annotation: false, jsdoc: false }, minify: false, sourcemap: false },
});
const chunk = result.output.find((o) => o.type === "chunk");
if (!chunk) throw new Error("rolldown produced no chunk");
await mkdir(path.dirname(outFile), { recursive: true });
await writeFile(outFile, chunk.code);
console.error(`wrote ${path.relative(root, outFile)} (${(chunk.code.length / 1e6).toFixed(2)} MB)`);
