import { execFileSync, spawn } from "node:child_process";
import { readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { capturedOutput, REPO_ROOT, runCli } from "../helpers/run-cli.js";
import { inputVariable, parseGithubOutput } from "../helpers/actions-runner.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../helpers/workspace.js";

/**
 * The Action as the runner runs it: `node action/dist/index.mjs` (the
 * committed bundle action.yml names), inputs as INPUT_* variables, outputs
 * and summary through the files GITHUB_OUTPUT and GITHUB_STEP_SUMMARY name,
 * the workspace as working directory, a real publish into a folder store.
 */
const ENTRY = path.join(REPO_ROOT, "action", "dist", "index.mjs");

/** action.yml and the template, read by an independent YAML parser (PyYAML). */
function readYaml(file: string): any {
  return JSON.parse(execFileSync("python3", ["-c", "import sys, json, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))", file], { encoding: "utf8" }));
}

interface RunnerResult {
  code: number;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
}

/** Far above a run's few seconds, far below vitest's limit: a hung run fails with its output instead of timing the file out. */
const ACTION_LIMIT_MS = 180_000;

async function runAction(ws: Workspace, inputs: Record<string, string>, env: NodeJS.ProcessEnv = {}): Promise<RunnerResult> {
  const tag = Math.random().toString(36).slice(2);
  const outputFile = path.join(ws.dir, `output-${tag}`);
  const summaryFile = path.join(ws.dir, `summary-${tag}`);
  await writeFile(outputFile, "");
  await writeFile(summaryFile, "");
  const runnerEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH, HOME: process.env.HOME,
    GITHUB_ACTIONS: "true", CI: "true", GITHUB_WORKSPACE: ws.dir, GITHUB_OUTPUT: outputFile, GITHUB_STEP_SUMMARY: summaryFile,
    GITHUB_REF_TYPE: "tag", GITHUB_REF_NAME: "v1.2.0", RUNNER_TEMP: ws.dir,
    ...Object.fromEntries(Object.entries(inputs).map(([k, v]) => [inputVariable(k), v])),
    ...env,
  };
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
    // Its own process group, so that a run that hangs is stopped with everything it started, and says where it was.
    const child = spawn(process.execPath, [ENTRY], { cwd: ws.dir, env: runnerEnv, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let out = "";
    let err = "";
    const limit = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      reject(new Error(`the Action ran longer than ${ACTION_LIMIT_MS / 1000} s and was stopped with its processes; its output so far:\n--- stdout\n${out}\n--- stderr\n${err}`));
    }, ACTION_LIMIT_MS);
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("close", (c) => {
      clearTimeout(limit);
      resolve({ code: c ?? -1, stdout: out, stderr: err });
    });
  });
  const result = { code, stdout, stderr, outputs: parseGithubOutput(await readFile(outputFile, "utf8")), summary: await readFile(summaryFile, "utf8") };
  capturedOutput.push(stdout, stderr, result.summary, JSON.stringify(result.outputs));
  return result;
}

const CHANGELOG = "# Changelog\n\n## [1.2.0] - 2026-11-20\n### Added\n- **Faster** sync\n\n### Fixed\n- Reconnect after sleep\n";

describe("the Action (action.yml) under a simulated runner", () => {
  let ws: Workspace;
  let release: { app: string; dmg: string; notes: string };
  let inputs: Record<string, string>;

  beforeAll(async () => {
    ws = await makeWorkspace();
    release = await ws.plugin("1.2.0", 120);
    await writeFile(path.join(ws.dir, "CHANGELOG.md"), CHANGELOG);
    // Paths relative to the workspace, as a workflow writes them.
    inputs = {
      version: "", app: path.relative(ws.dir, release.app), dmg: path.relative(ws.dir, release.dmg), changelog: "CHANGELOG.md",
      store: "file://./store", channel: "", config: "relcast.config.json", "dry-run": "false",
      args: `--summary "Faster sync, fewer drops" --published-at 2026-11-20T10:00:00.000Z`, "signing-key": ws.key.seedBase64,
    };
  });
  afterAll(async () => {
    await rm(ws.dir, { recursive: true, force: true });
  });

  it("action.yml runs the bundle on node24 and declares every input the entry reads and the four outputs", () => {
    const action = readYaml(path.join(REPO_ROOT, "action.yml"));
    expect(action.runs).toEqual({ using: "node24", main: "action/dist/index.mjs" });
    expect(Object.keys(action.inputs).sort()).toEqual(["app", "args", "changelog", "channel", "config", "dmg", "dry-run", "notes", "signing-key", "store", "version"]);
    expect(Object.keys(action.outputs).sort()).toEqual(["appcast-url", "checksums", "download-url", "version"]);
    for (const name of ["app", "dmg"]) expect(action.inputs[name].required).toBe(true);
  });

  it("the workflow template uses the Action with inputs it declares, and installs no package", async () => {
    const action = readYaml(path.join(REPO_ROOT, "action.yml"));
    const template = readYaml(path.join(REPO_ROOT, "templates", "github-release.yml"));
    const steps = template.jobs.release.steps as Array<{ uses?: string; with?: Record<string, unknown>; run?: string }>;
    const uses = steps.filter((s) => s.uses?.endsWith("/relcast@v0"));
    expect(uses.length).toBe(2);
    for (const step of uses) {
      expect(Object.keys(step.with ?? {}).filter((k) => !(k in action.inputs))).toEqual([]);
      for (const [name, spec] of Object.entries(action.inputs as Record<string, { required?: boolean }>)) if (spec.required) expect(step.with).toHaveProperty(name);
    }
    const scripts = steps.map((s) => s.run ?? "").join("\n");
    expect(scripts).not.toMatch(/npm (install|i|ci)\b|npx |yarn |pnpm /);
  });

  it("a dry run checks everything, sets the outputs and creates nothing, not even the store folder", async () => {
    const run = await runAction(ws, { ...inputs, "dry-run": "true" });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/plan for .*1\.2\.0 \(new\)/);
    expect(run.outputs).toEqual({
      version: "1.2.0",
      "appcast-url": "https://updates.example.com/api/v1/plugins/bridge-plugin/appcast.xml",
      "download-url": "https://updates.example.com/downloads/bridge-plugin-1.2.0.dmg",
      checksums: path.join(ws.dir, "relcast-bridge-plugin-1.2.0.sha256"),
    });
    await expect(stat(ws.storeDir)).rejects.toMatchObject({ code: "ENOENT" });
    // The run's page shows what the publish would do.
    expect(run.summary).toContain("## Bridge Plugin 1.2.0: dry run, nothing written");
    expect(run.summary).toMatch(/### The publish would write \d+ objects/);
    expect(run.summary).toContain("- put `releases/1.2.0/bridge-plugin-1.2.0.zip` (upload: new)");
    expect(run.summary).toContain("### Added\n- **Faster** sync\n\n### Fixed\n- Reconnect after sleep");
  });

  it("publishes: version from the tag, notes from the changelog, outputs, step summary, masked key; relcast verify accepts the store", async () => {
    const run = await runAction(ws, inputs);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`::add-mask::${ws.key.seedBase64}`);
    expect(run.stderr).toMatch(/::group::preflight[\s\S]*::endgroup::/);
    expect(run.outputs).toEqual({
      version: "1.2.0",
      "appcast-url": "https://updates.example.com/api/v1/plugins/bridge-plugin/appcast.xml",
      "download-url": "https://updates.example.com/downloads/bridge-plugin-1.2.0.dmg",
      checksums: path.join(ws.dir, "relcast-bridge-plugin-1.2.0.sha256"),
    });
    // The attestation's subjects: both downloads, checked by coreutils against the stored files.
    const sums = await readFile(run.outputs.checksums!, "utf8");
    expect(sums.trim().split("\n").map((l) => l.split("  ")[1])).toEqual(["bridge-plugin-1.2.0.dmg", "bridge-plugin-1.2.0.zip"]);
    expect(execFileSync("sha256sum", ["-c", run.outputs.checksums!], { cwd: path.join(ws.storeDir, "releases", "1.2.0"), encoding: "utf8" }))
      .toBe("bridge-plugin-1.2.0.dmg: OK\nbridge-plugin-1.2.0.zip: OK\n");
    expect(run.stderr).toContain("SUFeedURL: https://updates.example.com/api/v1/plugins/bridge-plugin/appcast.xml");
    expect(run.summary).toContain("## Bridge Plugin 1.2.0 published");
    expect(run.summary).toContain("### Added\n- **Faster** sync\n\n### Fixed\n- Reconnect after sleep");
    const record = JSON.parse(await readFile(path.join(ws.storeDir, "releases", "1.2.0", "release.json"), "utf8"));
    expect(record).toMatchObject({ version: "1.2.0", summary: "Faster sync, fewer drops", releaseNotesList: ["Faster sync", "Reconnect after sleep"], publishedAtIso: "2026-11-20T10:00:00.000Z" });
    const verify = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
    expect(verify.code, verify.stderr + verify.stdout).toBe(0);
  });

  it("no signing key (a secret that does not exist arrives empty): the error names the signing-key input and the secret", async () => {
    const before = await snapshotTree(ws.storeDir);
    const run = await runAction(ws, { ...inputs, "signing-key": "" }, { RELCAST_SIGNING_KEY: "" });
    expect(run.code).toBe(6);
    expect(run.stderr).toContain("::error title=relcast E_KEY::no signing key: the signing-key input is empty");
    expect(run.stderr).toMatch(/fix: create the repository secret RELCAST_SIGNING_KEY .* signing-key: \$\{\{ secrets\.RELCAST_SIGNING_KEY \}\}/);
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });

  it("a missing required input or a bad dry-run value fails with an annotation and writes nothing", async () => {
    const before = await snapshotTree(ws.storeDir);
    const noApp = await runAction(ws, { ...inputs, app: "" });
    expect(noApp.code).toBe(2);
    expect(noApp.stderr).toContain("::error title=relcast E_USAGE::input app is required");
    const badBool = await runAction(ws, { ...inputs, "dry-run": "yes" });
    expect(badBool.code).toBe(2);
    expect(badBool.stderr).toContain('input dry-run is "yes", not true or false');
    const noTag = await runAction(ws, inputs, { GITHUB_REF_TYPE: "branch", GITHUB_REF_NAME: "main" });
    expect(noTag.code).toBe(2);
    expect(noTag.stderr).toContain("input version is required when the workflow was not started by a tag push");
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });
});
