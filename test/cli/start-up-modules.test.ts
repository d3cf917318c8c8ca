import { execFile } from "node:child_process";
import { copyFile, cp, mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/run-cli.js";

const run = promisify(execFile);

/** The chunks a bundle file imports statically (`import … from "./chunks/x.mjs"`), not those it loads with import(). */
function staticChunks(code: string): string[] {
  return [...code.matchAll(/^import\s[^;]*?from\s+"\.{1,2}\/(?:chunks\/)?([^"]+\.mjs)";?$/gm)].map((m) => m[1]!);
}

/**
 * What each start of the binary loads decides its start-up time (tests and scripts start it hundreds of times).
 * Checked by what the binary can run WITHOUT: a copy of dist/cli that holds only the chunks a run may load; a
 * run that imported anything else fails with ERR_MODULE_NOT_FOUND. No timing is measured.
 */
describe("the binary loads only what the command line needs", () => {
  let copy: string;
  let version: string;

  /** A copy of the binary holding the entry, its static imports (transitively) and the chunks named. */
  async function trimmedCopy(name: string, keep: (chunk: string) => boolean): Promise<string> {
    const dir = path.join(copy, name);
    const source = path.join(REPO_ROOT, "dist", "cli");
    await cp(source, dir, { recursive: true });
    await copyFile(path.join(REPO_ROOT, "package.json"), path.join(copy, name, "package.json"));
    const needed = new Set<string>();
    const visit = async (file: string) => {
      for (const chunk of staticChunks(await readFile(path.join(source, "chunks", file), "utf8"))) {
        if (needed.has(chunk)) continue;
        needed.add(chunk);
        await visit(chunk);
      }
    };
    for (const chunk of staticChunks(await readFile(path.join(source, "relcast.mjs"), "utf8"))) {
      needed.add(chunk);
      await visit(chunk);
    }
    const all = await readdir(path.join(source, "chunks"));
    for (const chunk of all.filter(keep)) {
      needed.add(chunk);
      await visit(chunk);
    }
    let removed = 0;
    for (const chunk of all) {
      if (needed.has(chunk)) continue;
      await rm(path.join(dir, "chunks", chunk));
      removed++;
    }
    expect(removed, "the copy left out no chunk, so it proves nothing").toBeGreaterThan(0);
    return path.join(dir, "relcast.mjs");
  }

  beforeAll(async () => {
    copy = await mkdtemp(path.join(os.tmpdir(), "relcast-start-up-"));
    version = (JSON.parse(await readFile(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;
  });
  afterAll(async () => {
    await rm(copy, { recursive: true, force: true });
  });

  it("--version and -V load no command at all", async () => {
    const bin = await trimmedCopy("version", () => false);
    for (const args of [["--version"], ["-V"], ["--debug", "--version"]]) {
      const { stdout } = await run(process.execPath, [bin, ...args]);
      expect(stdout.trim()).toBe(version);
    }
    // The same copy cannot run a command, so the runs above did not reach one by luck.
    const err = await run(process.execPath, [bin, "keys", "--help"]).then(() => undefined, (e: { stderr: string }) => e);
    expect(err?.stderr).toMatch(/ERR_MODULE_NOT_FOUND|Cannot find module/);
  });

  it("`keys` and `sign` load neither publish, verify nor the gateway", async () => {
    const bin = await trimmedCopy("keys-sign", (chunk) => /^(keys|sign)-/.test(chunk));
    const keys = await run(process.execPath, [bin, "keys", "--help"]);
    expect(keys.stdout).toMatch(/Usage: relcast keys/);
    const help = await run(process.execPath, [bin, "sign", "--help"]);
    expect(help.stdout).toMatch(/Usage: relcast sign/);
  });

  it("no bundle holds plist's writer (xmlbuilder): relcast only reads plists, and its CommonJS would run at every start", async () => {
    const files = [path.join(REPO_ROOT, "action", "dist", "index.mjs"), path.join(REPO_ROOT, "dist", "cli", "relcast.mjs")];
    for (const chunk of await readdir(path.join(REPO_ROOT, "dist", "cli", "chunks"))) files.push(path.join(REPO_ROOT, "dist", "cli", "chunks", chunk));
    for (const file of files) expect(await readFile(file, "utf8"), file).not.toMatch(/node_modules\/xmlbuilder\//);
    // plist's reader is still there: the chunks read Info.plist files through it.
    const all = await Promise.all(files.map((f) => readFile(f, "utf8")));
    expect(all.some((code) => /node_modules\/plist\/dist\/parse\.js/.test(code))).toBe(true);
  });
});
