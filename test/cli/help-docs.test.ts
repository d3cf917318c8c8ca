import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, runCli } from "../helpers/run-cli.js";

/** Command names in the "Commands:" part of a help text (without `help`). */
function commandsIn(help: string): string[] {
  // The list ends at its first blank line: text after it (a command's own examples) is not a list of commands.
  const section = (help.split(/^Commands:$/m)[1] ?? "").split(/\n\s*\n/)[0]!;
  return [...section.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((m) => m[1]!).filter((c) => c !== "help");
}

/** Every command line `relcast …` that --help lists, subcommands included, with its help text (computed once). */
let tree: Promise<Map<string, string>> | undefined;
function helpTree(): Promise<Map<string, string>> {
  tree ??= (async () => {
    const found = new Map<string, string>();
    const visit = async (words: string[]): Promise<void> => {
      // relcast's commands are at most three words deep; a deeper one means the help parsing above went wrong.
      if (words.length > 3) throw new Error(`help tree deeper than three commands: relcast ${words.join(" ")}`);
      const help = (await runCli([...words, "--help"])).stdout;
      found.set(["relcast", ...words].join(" "), help);
      await Promise.all(commandsIn(help).map((sub) => visit([...words, sub])));
    };
    await visit([]);
    return found;
  })();
  return tree;
}

/**
 * A section number of a specification users do not have ("§4.8", "spec §5.2", "spec 5.2"); the sections of public
 * documents (RFC 6749 §4.1, APPNOTE.TXT §4.3) are fine.
 */
const SPEC_SECTION = /(?<!(?:RFC\s\d{3,5}|APPNOTE\.TXT)\s)§\s*\d|\bspec(?:ification)?\s+(?:section\s+)?\d+\.\d/i;

/** Every file below `dir` (relative to the repository), for docs in subfolders too. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(REPO_ROOT, dir), { withFileTypes: true });
  const nested = await Promise.all(entries.map((e) => (e.isDirectory() ? filesUnder(`${dir}/${e.name}`) : [`${dir}/${e.name}`])));
  return nested.flat();
}

/**
 * The type declarations a user of the package reads in their editor: every .d.ts that the exports map's entry points
 * import, directly or through others (the hover text of `relcast/hmac` and friends).
 */
async function shippedDeclarations(): Promise<string[]> {
  const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, "package.json"), "utf8")) as { exports: Record<string, string | { types?: string }> };
  const todo = Object.values(pkg.exports).flatMap((e) => (typeof e === "object" && e.types ? [path.posix.normalize(e.types)] : []));
  const seen = new Set<string>();
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = await readFile(path.join(REPO_ROOT, file), "utf8");
    for (const m of text.matchAll(/(?:from\s+|import\()["'](\.{1,2}\/[^"']+)\.js["']/g)) todo.push(path.posix.join(path.posix.dirname(file), `${m[1]!}.d.ts`));
  }
  return [...seen];
}

/** What users read besides --help: the README, every page under docs/, the Action, the workflow template, the config's JSON Schema, the shipped declarations. */
async function userDocs(): Promise<string[]> {
  const optional = ["action.yml", "relcast.schema.json"];
  const present = await Promise.all(optional.map((f) => stat(path.join(REPO_ROOT, f)).then(() => f, () => undefined)));
  return [
    "README.md",
    ...(await filesUnder("docs")).filter((f) => f.endsWith(".md")),
    ...(await filesUnder("templates")),
    ...present.filter((f): f is string => f !== undefined),
    ...(await shippedDeclarations()),
  ];
}

describe("docs a user can follow alone", { timeout: 180_000 }, () => {
  it("every command and subcommand in `relcast --help` is in the README", async () => {
    const readme = await readFile(path.join(REPO_ROOT, "README.md"), "utf8");
    const commands = [...(await helpTree()).keys()].filter((c) => c !== "relcast");
    expect(commands).toEqual(expect.arrayContaining(["relcast gc", "relcast rebuild", "relcast init", "relcast publish", "relcast keys generate"]));
    expect(commands.filter((c) => !readme.includes(`\`${c}`) && !readme.includes(`${c} `))).toEqual([]);
  });

  it("no help text, README, docs page, Action, template, JSON Schema or shipped declaration points to a specification section number", async () => {
    const found: string[] = [];
    for (const [command, help] of await helpTree()) if (SPEC_SECTION.test(help.replace(/\s+/g, " "))) found.push(command);
    const docs = await userDocs();
    expect(docs).toEqual(expect.arrayContaining(["README.md", "docs/config.md", "templates/github-release.yml", "relcast.schema.json", "dist/src/hmac/index.d.ts", "dist/src/hmac/sign-request.d.ts"]));
    for (const doc of docs) {
      const text = (await readFile(path.join(REPO_ROOT, doc), "utf8")).replace(/\s+/g, " ");
      for (const m of text.matchAll(new RegExp(SPEC_SECTION.source, `${SPEC_SECTION.flags}g`))) found.push(`${doc}: …${text.slice(Math.max(0, m.index - 30), m.index + 10)}…`);
    }
    expect(found).toEqual([]);
  });
});
