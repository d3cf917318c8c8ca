import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { CHECKOUT_CACHE, withCheckoutLock } from "../../scripts/checkout-lock.mjs";
import { REPO_ROOT } from "../helpers/run-cli.js";

const run = promisify(execFile);

describe("the relcast binary after npm ci", () => {
  it("runs as `node <bin from package.json>`", async () => {
    const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, "package.json"), "utf8"));
    const { stdout } = await run(process.execPath, [path.join(REPO_ROOT, pkg.bin.relcast), "--help"]);
    for (const command of ["publish", "rebuild", "gc", "hmac", "gateway"]) expect(stdout).toMatch(new RegExp(`^  ${command}\\b`, "m"));
  });

  it("runs as `npx relcast`", async () => {
    // npx links the checkout into <npm cache>/_npx/<hash of its path>; two suites in one checkout raced on that
    // folder in the shared ~/.npm (seen: ENOENT on its package.json, and every later run failed). This checkout's
    // own npm cache, one npx at a time: the link is made once, later runs reuse it.
    // Making the link runs the linked package's `prepare` script (npm's rule for links), here `npm run build`: a
    // whole second build of dist/ in the middle of the suite (most of this test's time in a fresh clone), which
    // the global setup has already built. Scripts off: the link and the bin npx runs are the same without it.
    const { stdout } = await withCheckoutLock("npx", () =>
      run("npx", ["--no-install", "relcast", "publish", "--help"], {
        cwd: REPO_ROOT,
        env: { ...process.env, npm_config_cache: path.join(CHECKOUT_CACHE, "npm"), npm_config_ignore_scripts: "true" },
      }));
    expect(stdout).toContain("--version <semver>");
    expect(stdout).toContain("--dry-run");
  }); // the first run in a checkout makes the link: npm's tree work (the default hang guard)

  it("an unknown flag is a usage error (exit 2) with a pointer to --help", async () => {
    const err = await run(process.execPath, [path.join(REPO_ROOT, "dist/cli/relcast.mjs"), "publish", "--version", "1.0.0", "--app", "a", "--dmg", "d", "--notes", "n", "--colour"]).catch((e: { code: number; stderr: string }) => e);
    expect((err as { code: number }).code).toBe(2);
    expect((err as { stderr: string }).stderr).toMatch(/unknown option '--colour'[\s\S]*--help/);
  });

  it("names an unknown flag first, before any missing required option", async () => {
    const err = await run(process.execPath, [path.join(REPO_ROOT, "dist/cli/relcast.mjs"), "publish", "--verison", "1.0.0"]).catch((e: { code: number; stderr: string }) => e);
    expect((err as { code: number }).code).toBe(2);
    expect((err as { stderr: string }).stderr.split("\n")[0]).toBe("error: unknown option '--verison'");
    const missing = await run(process.execPath, [path.join(REPO_ROOT, "dist/cli/relcast.mjs"), "publish", "--app", "a"]).catch((e: { code: number; stderr: string }) => e);
    expect((missing as { code: number }).code).toBe(2);
    expect((missing as { stderr: string }).stderr).toContain("required option '--version <semver>' not specified");
  });

  it("prints its version with --version and -V; after a command name --version is that command's flag", async () => {
    const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string };
    for (const flag of ["--version", "-V"]) {
      const { stdout } = await run(process.execPath, [path.join(REPO_ROOT, "dist/cli/relcast.mjs"), flag]);
      expect(stdout.trim()).toBe(pkg.version);
    }
    const err = await run(process.execPath, [path.join(REPO_ROOT, "dist/cli/relcast.mjs"), "publish", "--version", "1.0.0", "--debug"]).catch((e: { code: number; stderr: string }) => e);
    expect((err as { stderr: string }).stderr).toContain("required option '--app <dir>' not specified");
  });
});
