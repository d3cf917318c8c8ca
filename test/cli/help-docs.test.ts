import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, runCli } from "../helpers/run-cli.js";

/** Command names in the "Commands:" part of a help text (without `help`). */
function commandsIn(help: string): string[] {
  const section = help.split(/^Commands:$/m)[1] ?? "";
  return [...section.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((m) => m[1]!).filter((c) => c !== "help");
}

/** Every command line `relcast …` that --help lists, subcommands included, with its help text (computed once). */
let tree: Promise<Map<string, string>> | undefined;
function helpTree(): Promise<Map<string, string>> {
  tree ??= (async () => {
    const found = new Map<string, string>();
    const visit = async (words: string[]): Promise<void> => {
      const help = (await runCli([...words, "--help"])).stdout;
      found.set(["relcast", ...words].join(" "), help);
      await Promise.all(commandsIn(help).map((sub) => visit([...words, sub])));
    };
    await visit([]);
    return found;
  })();
  return tree;
}

/** A section number of a specification users do not have ("§4.8", "spec §5.2"); RFC sections are public. */
const SPEC_SECTION = /(?<!RFC\s\d{3,5}\s)§\s*\d/;

describe("docs a user can follow alone", { timeout: 180_000 }, () => {
  it("every command and subcommand in `relcast --help` is in the README", async () => {
    const readme = await readFile(path.join(REPO_ROOT, "README.md"), "utf8");
    const commands = [...(await helpTree()).keys()].filter((c) => c !== "relcast");
    expect(commands).toEqual(expect.arrayContaining(["relcast gc", "relcast rebuild", "relcast init", "relcast publish", "relcast keys generate"]));
    expect(commands.filter((c) => !readme.includes(`\`${c}`) && !readme.includes(`${c} `))).toEqual([]);
  });

  it("no help text, README or docs page points to a specification section number", async () => {
    const found: string[] = [];
    for (const [command, help] of await helpTree()) if (SPEC_SECTION.test(help.replace(/\s+/g, " "))) found.push(command);
    const docs = ["README.md", ...(await readdir(path.join(REPO_ROOT, "docs"))).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
    for (const doc of docs) {
      const text = (await readFile(path.join(REPO_ROOT, doc), "utf8")).replace(/\s+/g, " ");
      for (const m of text.matchAll(new RegExp(SPEC_SECTION.source, "g"))) found.push(`${doc}: …${text.slice(Math.max(0, m.index - 30), m.index + 10)}…`);
    }
    expect(found).toEqual([]);
  });
});
