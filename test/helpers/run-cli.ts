import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const CLI = path.join(REPO_ROOT, "dist", "cli", "relcast.mjs");

export interface CliResult {
  code: number;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** All output ever captured from the CLI, so a suite can scan it for secrets. */
export const capturedOutput: string[] = [];

/** Runs the real, built CLI as a child process. */
export function runCli(args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {}): Promise<CliResult> {
  return startCli(args, options).done;
}

/** As runCli, with the child at hand (to signal it while it runs). */
export function startCli(args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {}): { child: ChildProcess; done: Promise<CliResult> } {
  const env = { ...process.env, GITHUB_ACTIONS: "", ...options.env };
  const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd ?? REPO_ROOT, env });
  const done = new Promise<CliResult>((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();
    child.on("close", (code, signal) => {
      capturedOutput.push(stdout, stderr);
      resolve({ code: code ?? -1, signal, stdout, stderr });
    });
  });
  return { child, done };
}
