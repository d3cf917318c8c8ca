// Bundles the GitHub Action (src/action/index.ts) into one file,
// action/dist/index.mjs, which action.yml runs on the runner's Node 24.
// The bundle is committed: a workflow that uses the Action downloads the
// repository at the pinned ref and runs this file; nothing is installed at
// run time. `npm run build` makes the same bundle (scripts/bundle.mjs); CI checks the committed file is current.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { bundleAction } from "./bundle.mjs";

const root = path.resolve(import.meta.dirname, "..");
const outFile = process.argv[2] ?? path.join(root, "action", "dist", "index.mjs");

const entry = await bundleAction();
await mkdir(path.dirname(outFile), { recursive: true });
await writeFile(outFile, entry.code);
console.error(`wrote ${path.relative(root, outFile)} (${(entry.code.length / 1e6).toFixed(2)} MB)`);
