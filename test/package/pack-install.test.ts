import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
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
 */
const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, "package.json"), "utf8")) as {
  name: string; version: string; dependencies: Record<string, string>;
};

let dir: string;
let project: string;
let tarball: string;
let ws: Workspace;

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
  await run("npm", ["install", "--offline", "--ignore-scripts", ...NPM_QUIET, tarball], { cwd: project });
  // What a TypeScript user has anyway: the compiler and Node's types.
  await linkFromRepo("@types/node");
  ws = await makeWorkspace();
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  if (ws) await rm(ws.dir, { recursive: true, force: true });
});

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
