// One rolldown set-up for relcast's two bundles: the GitHub Action (one file,
// committed as action/dist/index.mjs) and the `relcast` binary (dist/cli/:
// an entry plus lazily loaded chunks, one per command). A bundle starts much
// faster than the same code as ~500 separate modules: `relcast publish`
// spent 0.4 of its 1.5 CPU seconds resolving and compiling modules.
import path from "node:path";
import { build } from "rolldown";

const ROOT = path.resolve(import.meta.dirname, "..");

/**
 * Bundles `input` for Node; returns the output files ({ fileName, code }),
 * the entry first. `external`: packages left to node_modules (native code,
 * optional native requires). `split`: keep dynamic imports as separate chunks.
 */
async function bundle({ input, entryFileName, external = [], split }) {
  const result = await build({
    cwd: ROOT,
    input,
    platform: "node",
    external: [/^node:/, ...external],
    logLevel: "warn",
    // plist's index re-exports its writer, whose CommonJS xmlbuilder (33 modules) would otherwise run at every
    // start of a command that reads an Info.plist; relcast only parses plists, so the writer is dropped.
    treeshake: { moduleSideEffects: [{ test: /node_modules[\\/](plist[\\/]dist[\\/]build|xmlbuilder[\\/])/, sideEffects: false }] },
    write: false,
    output: {
      format: "esm",
      entryFileNames: entryFileName,
      chunkFileNames: "chunks/[name]-[hash].mjs",
      codeSplitting: split,
      comments: { legal: false, annotation: false, jsdoc: false },
      minify: false,
      sourcemap: false,
    },
  });
  const chunks = result.output.filter((o) => o.type === "chunk");
  if (chunks.length === 0) throw new Error(`rolldown produced no chunk for ${input}`);
  return chunks.sort((a, b) => Number(b.isEntry) - Number(a.isEntry)).map((c) => ({ fileName: c.fileName, code: c.code }));
}

/** The Action: one file, index.mjs. Only what the publish command reaches; better-sqlite3 (gateway) is never imported. */
export async function bundleAction() {
  const [entry] = await bundle({ input: path.join(ROOT, "src", "action", "index.ts"), entryFileName: "index.mjs", split: false });
  return entry;
}

/** The binary: relcast.mjs (with its #! line) and chunks/; native and optional-native packages stay in node_modules. */
export async function bundleCli() {
  const files = await bundle({ input: path.join(ROOT, "src", "cli", "main.ts"), entryFileName: "relcast.mjs", split: true, external: ["better-sqlite3", "pg", "pg-native"] });
  if (!files[0].code.startsWith("#!")) throw new Error("the CLI bundle lost its #! line");
  return files;
}
