import { appendFileSync } from "node:fs";
import { maskSecrets } from "../core/secrets.js";

/** GitHub Actions workflow-command helpers; all no-ops outside Actions. */
export function inGitHubActions(): boolean {
  return process.env.GITHUB_ACTIONS === "true";
}

function escapeData(text: string): string {
  return text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

export function annotateError(message: string): void {
  if (inGitHubActions()) process.stdout.write(`::error::${escapeData(maskSecrets(message))}\n`);
}

/** Asks the runner to mask a value in all later log lines. */
export function addMask(value: string): void {
  if (inGitHubActions() && value) process.stdout.write(`::add-mask::${value}\n`);
}

export function setOutputs(outputs: Record<string, string>): void {
  const file = process.env.GITHUB_OUTPUT;
  if (!inGitHubActions() || !file) return;
  const lines = Object.entries(outputs).map(([k, v]) => `${k}=${maskSecrets(v)}`);
  appendFileSync(file, lines.join("\n") + "\n");
}

export function appendStepSummary(markdown: string): void {
  const file = process.env.GITHUB_STEP_SUMMARY;
  if (!inGitHubActions() || !file) return;
  appendFileSync(file, maskSecrets(markdown) + "\n");
}
