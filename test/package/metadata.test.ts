import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/run-cli.js";

/**
 * Where relcast lives, said once in package.json and the same everywhere a
 * user copies it from: `uses:` in the workflow template and the docs, the
 * issue tracker. No placeholder owner a user would have to guess.
 */
const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, "package.json"), "utf8")) as {
  repository: { type: string; url: string }; homepage: string; bugs: { url: string };
};

const slug = /^git\+https:\/\/github\.com\/([A-Za-z0-9-]+\/[A-Za-z0-9._-]+)\.git$/.exec(pkg.repository.url)?.[1];

async function userFiles(): Promise<Array<[string, string]>> {
  const docs = (await readdir(path.join(REPO_ROOT, "docs"))).filter((n) => n.endsWith(".md")).map((n) => `docs/${n}`);
  const files = [...docs, "templates/github-release.yml", "action.yml"];
  return Promise.all(files.map(async (f) => [f, await readFile(path.join(REPO_ROOT, f), "utf8")] as [string, string]));
}

describe("package.json names the repository, and the docs use the same name", () => {
  it("has repository, homepage and bugs on one GitHub repository", () => {
    expect(pkg.repository.type).toBe("git");
    expect(slug).toBeDefined();
    expect(pkg.homepage).toBe(`https://github.com/${slug}#readme`);
    expect(pkg.bugs.url).toBe(`https://github.com/${slug}/issues`);
  });

  it("every `uses:` of the relcast Action in the template and docs names that repository", async () => {
    const uses: string[] = [];
    for (const [, text] of await userFiles()) for (const m of text.matchAll(/uses:\s*([^\s@]+\/relcast)@/g)) uses.push(m[1]!);
    expect(uses.length).toBeGreaterThanOrEqual(3);
    expect([...new Set(uses)]).toEqual([slug]);
  });

  it("leaves no placeholder owner (<owner>, OWNER/) in the template, action.yml or docs", async () => {
    const found = (await userFiles()).flatMap(([f, text]) => [...text.matchAll(/<owner>|\bOWNER\//g)].map((m) => `${f}: ${m[0]}`));
    expect(found).toEqual([]);
  });
});
