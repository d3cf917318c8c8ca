import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

const run = promisify(execFile);
const NPM_QUIET = ["--no-audit", "--no-fund", "--loglevel=error"];

/**
 * The package as a user gets it: `npm pack` (dist/ is built by the global
 * setup, so pack skips `prepare`), the tarball installed by npm into an
 * empty project, then `npx relcast` and a TypeScript consumer of every entry
 * point, type-checked against the shipped declarations and run.
 *
 * Offline: before `npm install`, the consumer's node_modules gets a link to
 * the repository's copy of each of relcast's direct dependencies. npm accepts
 * a link whose package satisfies the range, so `npm install --offline` fetches
 * nothing; their own dependencies resolve through the links' real paths.
 *
 * No compiler: npm runs with install scripts on, a PATH holding only node, npm
 * and sh (no cc, gcc, g++, make, python, xz or bzip2) and CC/CXX set to
 * `false`, so a dependency that builds native code at install fails the
 * install (better-sqlite3 did: its prebuilt binary is not reachable offline and
 * node-gyp finds no Python or compiler). Then `relcast publish` runs in that
 * project with the same PATH.
 */
const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, "package.json"), "utf8")) as {
  name: string; version: string; dependencies: Record<string, string>;
};

let dir: string;
let project: string;
let tarball: string;
let ws: Workspace;
let bareEnv: NodeJS.ProcessEnv;

async function linkFromRepo(name: string): Promise<void> {
  const target = path.join(project, "node_modules", ...name.split("/"));
  await mkdir(path.dirname(target), { recursive: true });
  await symlink(path.join(REPO_ROOT, "node_modules", ...name.split("/")), target, "dir");
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "relcast-pack-"));
  project = path.join(dir, "consumer");
  await mkdir(project);
  const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir, ...NPM_QUIET], { cwd: REPO_ROOT });
  tarball = path.join(dir, (JSON.parse(stdout) as Array<{ filename: string }>)[0]!.filename);
  await writeFile(path.join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  for (const name of Object.keys(pkg.dependencies)) await linkFromRepo(name);
  const bin = path.join(dir, "bare-bin");
  await mkdir(bin);
  await symlink(process.execPath, path.join(bin, "node"));
  for (const tool of ["npm", "npx"]) await symlink(realpathSync(path.join(path.dirname(process.execPath), tool)), path.join(bin, tool));
  await symlink("/bin/sh", path.join(bin, "sh")); // npm runs install scripts with sh
  bareEnv = { ...process.env, PATH: bin, CC: "false", CXX: "false", npm_config_build_from_source: "", npm_config_offline: "true" };
  await run("npm", ["install", "--offline", ...NPM_QUIET, tarball], { cwd: project, env: bareEnv });
  // What a TypeScript user has anyway: the compiler and Node's types.
  await linkFromRepo("@types/node");
  ws = await makeWorkspace();
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  if (ws) await rm(ws.dir, { recursive: true, force: true });
});

/** The packages npm installed for the consumer (production tree), each as its real folder. */
function installedPackages(): Array<{ name: string; dir: string }> {
  const seen = new Map<string, string>();
  const visit = (name: string, from: string): void => {
    for (let at = from; ; at = path.dirname(at)) {
      const candidate = path.join(at, "node_modules", ...name.split("/"));
      if (existsSync(path.join(candidate, "package.json"))) {
        const real = realpathSync(candidate);
        if (seen.has(real)) return;
        seen.set(real, name);
        const manifest = JSON.parse(readFileSync(path.join(real, "package.json"), "utf8")) as { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
        for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) visit(dep, real);
        return;
      }
      if (path.dirname(at) === at) return; // an optional dependency not installed on this platform
    }
  };
  visit("relcast", project);
  return [...seen].map(([dir, name]) => ({ name, dir }));
}

describe("npm pack → npm install <tarball> in an empty project", () => {
  it("ships the built code, declarations, templates and README, and no sources, tests or maps", async () => {
    const { stdout } = await run("tar", ["-tzf", tarball]);
    const files = stdout.trim().split("\n").map((f) => f.replace(/^package\//, ""));
    expect(files).toEqual(expect.arrayContaining([
      "package.json", "README.md", "dist/cli/relcast.mjs", "dist/src/index.js", "dist/src/index.d.ts",
      "dist/src/hmac/index.d.ts", "dist/src/gateway-client/index.d.ts", "dist/src/sparkle/index.d.ts", "templates/github-release.yml", "relcast.schema.json",
      "templates/downloads.html", "templates/changelog.html", "templates/site.css",
    ]));
    expect(files.filter((f) => /^(src|test)\/|\.map$|\.test\./.test(f))).toEqual([]);
    // No data of relcast's own (the old product API changelog) ships to reach a user's site.
    expect(files.filter((f) => f.startsWith("data/"))).toEqual([]);
  });

  it("installs the tarball as the dependency and provides `npx relcast --version`", async () => {
    const consumer = JSON.parse(await readFile(path.join(project, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    expect(consumer.dependencies.relcast).toMatch(/^file:.*\.tgz$/);
    const { stdout } = await run("npx", ["--no-install", "relcast", "--version"], { cwd: project });
    expect(stdout.trim()).toBe(pkg.version);
    const help = await run("npx", ["--no-install", "relcast", "--help"], { cwd: project });
    expect(help.stdout).toMatch(/^ {2}publish\b/m);
  });

  it("`npx relcast init` points $schema at the shipped relcast.schema.json, which an independent validator accepts the config with", async () => {
    await run("npx", ["--no-install", "relcast", "init", "--key-file", "init-key.txt"], { cwd: project });
    const configFile = path.join(project, "relcast.config.json");
    const config = JSON.parse(await readFile(configFile, "utf8")) as { $schema: string };
    expect(config.$schema).toBe("./node_modules/relcast/relcast.schema.json");
    const schemaFile = path.resolve(project, config.$schema);
    const { stdout } = await run("python3", ["-c", "import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))); print('valid')", configFile, schemaFile]);
    expect(stdout.trim()).toBe("valid");
  });

  it("installs no native module and runs no install script: better-sqlite3 (the gateway's) is not installed", async () => {
    const installed = installedPackages();
    expect(installed.map((p) => p.name)).toEqual(expect.arrayContaining(["relcast", "zod", "xz-decompress"]));
    const native = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true, recursive: true })
        .filter((e) => e.isFile() && (e.name === "binding.gyp" || e.name.endsWith(".node")) && !path.relative(dir, e.parentPath).split(path.sep).includes("node_modules"))
        .map((e) => path.join(e.parentPath, e.name));
    const offenders = installed.flatMap(({ name, dir }) => {
      const scripts = (JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { scripts?: Record<string, string> }).scripts ?? {};
      const install = ["preinstall", "install", "postinstall"].filter((s) => scripts[s]);
      return [...install.map((s) => `${name}: ${s} script`), ...native(dir).map((f) => `${name}: ${path.basename(f)}`)];
    });
    expect(offenders).toEqual([]);
    expect(installed.map((p) => p.name)).not.toContain("better-sqlite3");
    const resolved = await run(process.execPath, ["--input-type=module", "-e", "await import('better-sqlite3')"], { cwd: project }).catch((e: { stderr: string }) => e);
    expect((resolved as { stderr: string }).stderr).toContain("ERR_MODULE_NOT_FOUND");
  });

  it("`relcast publish` there, with only node and npm on the PATH, publishes a release and its delta", async () => {
    const pub = await makeWorkspace({ deltas: { maximum: 5 } });
    try {
      const relcast = path.join(project, "node_modules", "relcast", "dist", "cli", "relcast.mjs");
      for (const [version, build] of [["1.0.0", 100], ["1.1.0", 110]] as const) {
        const p = await pub.plugin(version, build);
        const { stdout } = await run(process.execPath, [relcast, ...pub.publishArgs(p, version, ["--json"])], { cwd: project, env: { ...bareEnv, GITHUB_ACTIONS: "" } });
        const record = JSON.parse(stdout) as { version: string; autoupdate: { deltas?: Array<{ fromVersion: string; sizeBytes: number }> } };
        expect(record.version).toBe(version);
        if (version === "1.1.0") expect(record.autoupdate.deltas?.map((d) => d.fromVersion)).toEqual(["1.0.0"]);
      }
      const zip = await stat(path.join(pub.storeDir, "releases", "1.1.0", "bridge-plugin-1.1.0.zip"));
      expect(zip.size).toBeGreaterThan(0);
      const delta = await readFile(path.join(pub.storeDir, "releases", "1.1.0", "bridge-plugin-1.1.0-from-1.0.0.delta"));
      expect([delta.toString("latin1", 0, 4), delta[4]]).toEqual(["spk!", 5]); // no xz on that PATH: zlib
    } finally {
      await rm(pub.dir, { recursive: true, force: true });
    }
  });

  it("`relcast gateway` on a SQLite state says what to install (or to use PostgreSQL), exit 3", async () => {
    const config = path.join(dir, "gateway.json");
    await copyFile(path.join(REPO_ROOT, "examples", "gateway.json"), config);
    const relcast = path.join(project, "node_modules", "relcast", "dist", "cli", "relcast.mjs");
    const attempt = await run(process.execPath, [relcast, "gateway", "--config", config, "--db", path.join(dir, "gw.sqlite"), "--port", "0"], {
      cwd: project, env: { ...bareEnv, RELCAST_HMAC_ACME_BILLING: "x".repeat(32) }, timeout: 120_000,
    }).then(() => ({ code: 0, stderr: "started" }), (e: { code: number; stderr: string }) => e);
    expect(attempt.code).toBe(3);
    expect(attempt.stderr).toMatch(/better-sqlite3/);
    expect(attempt.stderr).toMatch(/npm install better-sqlite3/);
    expect(attempt.stderr).toMatch(/postgres:\/\//);
    await expect(stat(path.join(dir, "gw.sqlite"))).rejects.toThrow(/ENOENT/);
  });

  it("refuses deep imports that the exports map does not name", async () => {
    const attempt = await run(process.execPath, ["--input-type=module", "-e", "await import('relcast/dist/src/hmac/index.js')"], { cwd: project }).catch((e: { stderr: string }) => e);
    expect((attempt as { stderr: string }).stderr).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
  });

  it("a TypeScript consumer of relcast, relcast/hmac, relcast/gateway-client and relcast/sparkle type-checks and runs", async () => {
    await writeFile(path.join(project, "consumer.mts"), await readFile(path.join(REPO_ROOT, "test", "fixtures", "package-consumer.mts"), "utf8"));
    await writeFile(path.join(project, "tsconfig.json"), JSON.stringify({
      compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noUncheckedIndexedAccess: true, skipLibCheck: true, types: ["node"], outDir: "out" },
      files: ["consumer.mts"],
    }));
    // Type errors fail here (tsc exits non-zero), including an unused @ts-expect-error: the declarations must be real types.
    // skipLibCheck as most projects set it: the consumer is checked against the declarations, the declarations are not re-checked.
    await run(process.execPath, [path.join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], { cwd: project });

    const release = await ws.plugin("1.2.0", 120);
    const { stdout } = await run(process.execPath, ["out/consumer.mjs"], {
      cwd: project,
      env: { ...process.env, RELEASE_APP: release.app, RELEASE_DMG: release.dmg, RELEASE_NOTES: release.notes, RELEASE_CONFIG: ws.configFile, RELEASE_KEY_FILE: ws.keyFile },
    });
    const out = JSON.parse(stdout) as Record<string, unknown>;
    expect(out).toMatchObject({
      offline: true,
      fetched: "200 ok build-bot",
      forged: "401 signature",
      signatureValid: true,
      signatureOnOtherBytes: false,
      order: -1,
      authUrl: "https://auth.example.com/auth?client_id=app&response_type=code&scope=releases%3Aread&state=s",
      holder: "function",
      dryRun: { version: "1.2.0", mode: "new", appcastUrl: "https://updates.example.com/api/v1/plugins/bridge-plugin/appcast.xml" },
      badVersion: "E_VERSION 5",
    });
    expect((out.dryRun as { writes: number }).writes).toBeGreaterThan(3);
  }); // tsc on a shared, loaded machine: the default hang guard
});
