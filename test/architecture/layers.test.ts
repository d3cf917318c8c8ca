import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The layer rules of docs/architecture.md, checked on the
 * imports of src/: each top-level folder may import only the folders listed
 * for it (and itself), and no files import each other in a circle.
 * Type-only imports count: they tie the layers just the same.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  core: [],
  config: ["core"],
  store: ["core"],
  sparkle: ["core"],
  bundle: ["core"],
  domain: ["core", "config", "sparkle"],
  apply: ["core", "store", "domain"],
  catalog: ["core", "config", "sparkle", "store", "domain"],
  site: ["core", "config", "sparkle", "store", "domain", "catalog", "apply"],
  steps: ["core", "config", "sparkle", "store", "bundle", "domain", "catalog", "apply", "site"],
  release: ["core", "config", "sparkle", "store", "bundle", "domain", "catalog", "apply", "site", "steps"],
  verify: ["core", "config", "sparkle", "store", "bundle", "domain", "catalog", "site"],
  api: ["core", "config", "sparkle", "store", "bundle", "domain", "catalog", "apply", "site", "steps", "release"],
  cli: ["core", "config", "sparkle", "store", "bundle", "domain", "catalog", "apply", "site", "steps", "release", "api", "verify", "hmac", "gateway", "gateway-client", "install"],
  // The GitHub Action: the publish command with inputs from INPUT_* variables, bundled on its own.
  action: ["core", "config", "sparkle", "store", "bundle", "domain", "catalog", "apply", "site", "steps", "release", "api", "cli"],
  hmac: ["core"],
  gateway: ["core", "hmac"],
  "gateway-client": ["core"],
  install: ["core"],
  // src/index.ts: the package's main export (publishing as a function), on top of everything but the CLI.
  "(root)": ["core", "config", "sparkle", "store", "bundle", "domain", "catalog", "apply", "site", "steps", "release", "api", "verify", "hmac", "gateway", "gateway-client", "install"],
};

const SRC = path.resolve(import.meta.dirname, "../../src");
const IMPORT = /(?:^|[\s;])(?:import|export)\s[^"';]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith(".ts") ? [full] : [];
  });
}

/** file (relative to src/) → the src/ files it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, "utf8");
    const targets: string[] = [];
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2]!;
      if (!spec.startsWith(".")) continue;
      targets.push(path.relative(SRC, path.resolve(path.dirname(file), spec)).replace(/\.js$/, ".ts"));
    }
    graph.set(path.relative(SRC, file), targets);
  }
  return graph;
}

const folderOf = (file: string) => (file.includes(path.sep) ? file.split(path.sep)[0]! : "(root)");

/** Strongly connected components with more than one file (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("layers only point down (docs/architecture.md)", () => {
  const graph = importGraph();

  it("reads the imports of every source file", () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get(path.join("cli", "main.ts"))?.length).toBeGreaterThan(0);
  });

  it("every folder of src/ has a row in the table", () => {
    const folders = new Set([...graph.keys()].map(folderOf));
    expect([...folders].filter((f) => !(f in MAY_IMPORT)).sort()).toEqual([]);
  });

  it("no folder imports a folder it may not (above it, or beside it)", () => {
    const wrong: string[] = [];
    for (const [file, targets] of graph) {
      const from = folderOf(file);
      for (const target of targets) {
        const to = folderOf(target);
        if (to !== from && !MAY_IMPORT[from]?.includes(to)) wrong.push(`${file} -> ${target}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("no files import each other in a circle", () => {
    expect(circles(graph)).toEqual([]);
  });

  it("the checker itself finds an upward import and a circle", () => {
    const g = new Map([["a/x.ts", ["b/y.ts"]], ["b/y.ts", ["a/x.ts"]], ["c/z.ts", []]]);
    expect(circles(g)).toEqual([["a/x.ts", "b/y.ts"]]);
  });
});
