import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EXIT_CODES } from "../../src/core/errors.js";
import { REPO_ROOT } from "../helpers/run-cli.js";

const read = (file: string) => readFile(path.join(REPO_ROOT, file), "utf8");

async function markdownFiles(): Promise<string[]> {
  return ["README.md", ...(await readdir(path.join(REPO_ROOT, "docs"))).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
}

/** The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces as '-', repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, "");
  for (const m of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const base = m[1]!.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

describe("the README a release engineer reads", () => {
  it("opens with the two commands that do everything on a fresh machine, and both exist", async () => {
    const readme = await read("README.md");
    const [title, fence, demo, test, close] = readme.split("\n").filter((line) => line !== "");
    expect([title, fence, close]).toEqual(["# relcast", "```sh", "```"]);
    expect(demo).toMatch(/^npm ci && npm run demo +# publishes three demo releases to \.\/demo-out\/public-store and prints where catalog and appcast are$/);
    expect(test).toMatch(/^npm test +# builds, then runs every test/);
    const pkg = JSON.parse(await read("package.json")) as { scripts: Record<string, string> };
    expect(pkg.scripts.demo).toContain("scripts/demo.mjs");
    expect(pkg.scripts.test).toBe("vitest run");
    // What the first line promises: three publishes into demo-out/public-store, then the catalog and appcast printed.
    const demoScript = await read("scripts/demo.mjs");
    expect(demoScript).toContain('path.join(repo, "demo-out")');
    expect(demoScript).toContain('"public-store"');
    expect([...demoScript.matchAll(/\{ version: "[\d.]+"/g)]).toHaveLength(3);
    expect(demoScript).toMatch(/catalog: [\s\S]*appcast: /);
  });

  it("stays short: under 350 lines", async () => {
    expect((await read("README.md")).split("\n").length).toBeLessThan(350);
  });

  it("its exit-code table is the one the code uses", async () => {
    const readme = await read("README.md");
    const rows = [...readme.matchAll(/^\| (\d+) \| `(E_[A-Z]+)` \|/gm)].map((m) => [m[2]!, Number(m[1])]);
    expect(Object.fromEntries(rows)).toEqual(EXIT_CODES);
    expect(rows).toHaveLength(Object.keys(EXIT_CODES).length);
  });

  it("every link between the README and docs/ reaches a file, and a heading when it names one", async () => {
    const broken: string[] = [];
    for (const file of await markdownFiles()) {
      const text = (await read(file)).replace(/^```[\s\S]*?^```/gm, "");
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/i.test(target)) continue;
        const [where, anchor] = target.split("#") as [string, string | undefined];
        const resolved = where === "" ? file : path.posix.join(path.posix.dirname(file), where);
        if (!existsSync(path.join(REPO_ROOT, resolved))) {
          broken.push(`${file}: ${target} (no ${resolved})`);
          continue;
        }
        if (anchor !== undefined && resolved.endsWith(".md") && !anchorsOf(await read(resolved)).has(anchor)) broken.push(`${file}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});
