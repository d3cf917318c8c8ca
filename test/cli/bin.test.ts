import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/run-cli.js";

const run = promisify(execFile);

describe("the relcast binary after npm ci", () => {
  it("runs as `node <bin from package.json>`", async () => {
    const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, "package.json"), "utf8"));
    const { stdout } = await run(process.execPath, [path.join(REPO_ROOT, pkg.bin.relcast), "--help"]);
    for (const command of ["publish", "rebuild", "gc", "hmac", "gateway"]) expect(stdout).toMatch(new RegExp(`^  ${command}\\b`, "m"));
  });

  it("runs as `npx relcast`", async () => {
    const { stdout } = await run("npx", ["--no-install", "relcast", "publish", "--help"], { cwd: REPO_ROOT });
    expect(stdout).toContain("--version <semver>");
    expect(stdout).toContain("--dry-run");
  });

  it("an unknown flag is a usage error (exit 2) with a pointer to --help", async () => {
    const err = await run(process.execPath, [path.join(REPO_ROOT, "dist/src/cli/main.js"), "publish", "--version", "1.0.0", "--app", "a", "--dmg", "d", "--notes", "n", "--colour"]).catch((e: { code: number; stderr: string }) => e);
    expect((err as { code: number }).code).toBe(2);
    expect((err as { stderr: string }).stderr).toMatch(/unknown option '--colour'[\s\S]*--help/);
  });
});
