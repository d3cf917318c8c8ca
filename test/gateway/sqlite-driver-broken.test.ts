import { cp, mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sqliteOpenError } from "../../src/gateway/state/sqlite-driver.js";

const here = createRequire(import.meta.url);
const realPackage = path.dirname(here.resolve("better-sqlite3/package.json"));
const nodeModules = path.dirname(realPackage);

/**
 * better-sqlite3 installed without its native build (npm --ignore-scripts,
 * a copy from another machine): its JavaScript loads and opening a file
 * fails. The gateway says to rebuild it, not to pick another folder.
 */
describe("a better-sqlite3 whose native part is not built", () => {
  let dir: string;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("is told to run npm rebuild better-sqlite3 (or use PostgreSQL), not to pass --db in a writable folder", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "unbuilt-sqlite-"));
    const copy = path.join(dir, "node_modules", "better-sqlite3");
    await mkdir(copy, { recursive: true });
    for (const part of ["package.json", "lib"]) await cp(path.join(realPackage, part), path.join(copy, part), { recursive: true });
    for (const dep of ["bindings", "file-uri-to-path"]) await symlink(path.join(nodeModules, dep), path.join(dir, "node_modules", dep));
    const Unbuilt = createRequire(path.join(dir, "index.js"))("better-sqlite3") as new (file: string) => unknown;
    let thrown: unknown;
    try {
      new Unbuilt(path.join(dir, "state.sqlite"));
    } catch (err) {
      thrown = err;
    }
    expect(String(thrown)).toContain("Could not locate the bindings file");
    const error = sqliteOpenError(path.join(dir, "state.sqlite"), thrown);
    expect(error.code).toBe("E_CONFIG");
    expect(error.hint).toContain("npm rebuild better-sqlite3");
    expect(error.hint).toContain("postgres://");
    expect(error.hint).not.toContain("writable folder");
    // A real folder problem keeps the folder advice.
    const denied = Object.assign(new Error("unable to open database file"), { code: "SQLITE_CANTOPEN" });
    expect(sqliteOpenError("/nowhere/state.sqlite", denied).hint).toContain("writable folder");
  });
});
