import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { APPLY_STEPS, PLAN_STEPS } from "../../src/release/pipeline.js";
import { runCli, type CliResult } from "../helpers/run-cli.js";
import { parseGithubOutput } from "../helpers/actions-runner.js";
import { makeWorkspace, newKey, type Workspace } from "../helpers/workspace.js";

interface ActionsRun extends CliResult {
  summary: string;
  outputs: string;
}

async function runInActions(ws: Workspace, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ActionsRun> {
  const summaryFile = path.join(ws.dir, `summary-${Math.random().toString(36).slice(2)}.md`);
  const outputFile = path.join(ws.dir, `output-${Math.random().toString(36).slice(2)}.txt`);
  await writeFile(summaryFile, "");
  await writeFile(outputFile, "");
  const result = await runCli(args, { env: { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summaryFile, GITHUB_OUTPUT: outputFile, ...env } });
  return { ...result, summary: await readFile(summaryFile, "utf8"), outputs: await readFile(outputFile, "utf8") };
}

function keyEncodings(ws: Workspace): string[] {
  return [ws.key.seedBase64, ws.key.seed.toString("hex"), ws.key.seed.toString("base64url")];
}

describe("publish inside GitHub Actions", () => {
  let ws: Workspace;
  let run: ActionsRun;
  let record: Record<string, any>;

  beforeAll(async () => {
    ws = await makeWorkspace();
    const p = await ws.plugin("1.2.0", 120);
    // The key comes from the environment, as the workflow passes the secret.
    const args = ws.publishArgs(p, "v1.2.0", ["--json"]).filter((a, i, all) => a !== "--key-file" && all[i - 1] !== "--key-file");
    run = await runInActions(ws, args, { RELCAST_SIGNING_KEY: ws.key.seedBase64 });
    expect(run.code, run.stderr).toBe(0);
    record = JSON.parse(run.stdout);
  });

  it("keeps stdout pure JSON: workflow commands go to stderr", () => {
    expect(record.version).toBe("1.2.0");
    expect(run.stdout).not.toContain("::");
  });

  it("sets the version, appcast-url and download-url step outputs", () => {
    expect(parseGithubOutput(run.outputs)).toEqual({
      version: "1.2.0",
      "appcast-url": "https://updates.example.com/api/v1/plugins/bridge-plugin/appcast.xml",
      "download-url": "https://updates.example.com/downloads/bridge-plugin-1.2.0.dmg",
    });
  });

  it("writes a Markdown summary with version, sizes, URLs and the signature", () => {
    expect(run.summary).toContain("## Bridge Plugin 1.2.0 published");
    expect(run.summary).toContain(`${record.sizeBytes} bytes`);
    expect(run.summary).toContain(`${record.autoupdate.sizeBytes} bytes`);
    expect(run.summary).toContain(record.autoupdate.edSignature);
    expect(run.summary).toContain(record.sha256);
    expect(run.summary).toContain(record.publicAppcastUrl);
    expect(run.summary).toContain(`(${record.publicDownloadUrl})`);
    expect(run.summary).toContain("### Release notes\n\n- Bridge 1.2.0 starts faster\n- Fixed reconnect after sleep\n\n* Chat history keeps 50 turns\n");
  });

  it("a dry run's summary shows notes written as a heading and paragraphs (no list items), not an empty section", async () => {
    const p = await ws.plugin("1.3.0", 130);
    await writeFile(p.notes, "## Faster start\n\nBridge now starts in half the time.\n\nReconnects after sleep work again.\n");
    const dry = await runInActions(ws, ws.publishArgs(p, "1.3.0", ["--dry-run"]));
    expect(dry.code, dry.stderr).toBe(0);
    const notes = dry.summary.slice(dry.summary.indexOf("### Release notes"));
    expect(notes).toContain("Bridge now starts in half the time.");
    expect(notes).toContain("Reconnects after sleep work again.");
  });

  it("wraps every pipeline step in a balanced ::group::", () => {
    const lines = run.stderr.split("\n");
    const opened = lines.filter((l) => l.startsWith("::group::")).map((l) => l.slice("::group::".length));
    // The test workspace turns deltas off (deltas.maximum: 0), and a skipped step opens no group.
    expect(opened).toEqual([...PLAN_STEPS, ...APPLY_STEPS].map((s) => s.name).filter((name) => name !== "deltas"));
    expect(opened).toEqual(expect.arrayContaining(["preflight", "zip", "sign", "upload", "feeds"]));
    let depth = 0;
    for (const l of lines) {
      if (l.startsWith("::group::")) depth++;
      if (l === "::endgroup::") depth--;
      expect(depth).toBeGreaterThanOrEqual(0);
      expect(depth).toBeLessThanOrEqual(1);
    }
    expect(depth).toBe(0);
  });

  it("registers the key in every encoding with ::add-mask:: before any other line, and prints it nowhere else", () => {
    const lines = run.stderr.split("\n");
    const masks = lines.filter((l) => l.startsWith("::add-mask::")).map((l) => l.slice("::add-mask::".length));
    expect(masks).toEqual(expect.arrayContaining(keyEncodings(ws)));
    const firstOther = lines.findIndex((l) => !l.startsWith("::add-mask::"));
    expect(lines.slice(firstOther).some((l) => l.startsWith("::add-mask::"))).toBe(false);
    const rest = [run.stdout, lines.slice(firstOther).join("\n"), run.summary, run.outputs].join("\n");
    for (const secret of keyEncodings(ws)) expect(rest).not.toContain(secret);
  });
});

describe("a failing publish inside GitHub Actions", () => {
  it("annotates the error with ::error and a title, sets no outputs, and leaks no key", async () => {
    const ws = await makeWorkspace();
    const other = newKey();
    const p = await ws.plugin("1.0.0", 100, { publicKey: other.publicKeyBase64 });
    const run = await runInActions(ws, ws.publishArgs(p, "1.0.0"));
    expect(run.code).toBe(6);
    const errors = run.stderr.split("\n").filter((l) => l.startsWith("::error"));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^::error title=relcast E_KEY::.*SUPublicEDKey/);
    expect(run.outputs).toBe("");
    expect(run.summary).toBe("");
    const lines = run.stderr.split("\n").filter((l) => !l.startsWith("::add-mask::"));
    for (const secret of keyEncodings(ws)) expect([run.stdout, ...lines].join("\n")).not.toContain(secret);
  });

  it("masks a key from --key-file too, though the environment holds none", async () => {
    const ws = await makeWorkspace();
    const p = await ws.plugin("1.0.0", 100);
    const run = await runInActions(ws, ws.publishArgs(p, "1.0.0", ["--dry-run"]), { RELCAST_SIGNING_KEY: "" });
    expect(run.code, run.stderr).toBe(0);
    const masks = run.stderr.split("\n").filter((l) => l.startsWith("::add-mask::")).map((l) => l.slice(12));
    expect(masks).toEqual(expect.arrayContaining(keyEncodings(ws)));
  });
});
