import { appendFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { printable } from "../core/printable.js";
import { maskSecrets, onSecretRegistered } from "../core/secrets.js";

/**
 * GitHub Actions workflow-command helpers; all no-ops outside Actions.
 * Commands go to stderr (the runner reads both streams), so stdout stays
 * machine-readable: `relcast publish --json > record.json` works in a step.
 */
export function inGitHubActions(): boolean {
  return process.env.GITHUB_ACTIONS === "true";
}

export function writeWorkflowCommand(line: string): void {
  process.stderr.write(line + "\n");
}

/** Escaping of a workflow command's message (GitHub's toolkit `escapeData`), after control and format characters are made printable. */
export function escapeData(text: string): string {
  return printable(text, { keepNewlines: true }).replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

/** Escaping of a workflow command's property value (`escapeProperty`): also `:` and `,`. */
function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

export interface AnnotationProperties {
  title?: string;
  file?: string;
}

/** `::error title=...,file=...::message`, shown on the run's summary page. */
export function annotateError(message: string, properties: AnnotationProperties = {}): void {
  if (!inGitHubActions()) return;
  const props = Object.entries(properties)
    .filter(([, v]) => v !== undefined && v !== "")
    .map(([k, v]) => `${k}=${escapeProperty(maskSecrets(v as string))}`)
    .join(",");
  writeWorkflowCommand(`::error${props ? ` ${props}` : ""}::${escapeData(maskSecrets(message))}`);
}

/**
 * In Actions, every secret the process registers (signing key in each
 * encoding, client secrets, tokens) is masked by the runner from the moment
 * it is known, before any line that could carry it is printed.
 */
export function maskSecretsInRunnerLog(): void {
  if (!inGitHubActions()) return;
  // The value as it is (only the runner's own escaping): a mask must match the secret byte for byte.
  onSecretRegistered((value) => writeWorkflowCommand(`::add-mask::${value.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A")}`));
}

/**
 * Step outputs in the multi-line form (`name<<DELIM` … `DELIM`), so a value
 * holding a newline cannot inject another output. The delimiter is random.
 */
export function setOutputs(outputs: Record<string, string>): void {
  const file = process.env.GITHUB_OUTPUT;
  if (!inGitHubActions() || !file) return;
  const chunks = Object.entries(outputs).map(([name, raw]) => {
    const value = maskSecrets(raw);
    let delimiter: string;
    do delimiter = `ghadelimiter_${randomBytes(12).toString("hex")}`;
    while (value.includes(delimiter));
    return `${name}<<${delimiter}\n${value}\n${delimiter}\n`;
  });
  appendFileSync(file, chunks.join(""));
}

export function appendStepSummary(markdown: string): void {
  const file = process.env.GITHUB_STEP_SUMMARY;
  if (!inGitHubActions() || !file) return;
  appendFileSync(file, maskSecrets(markdown) + "\n");
}

/**
 * A file in the runner's temp folder (`$RUNNER_TEMP`, emptied after every
 * job), for a later step to read; its path, or undefined outside Actions.
 */
export function writeRunnerTempFile(name: string, text: string): string | undefined {
  const folder = process.env.RUNNER_TEMP;
  if (!inGitHubActions() || !folder) return undefined;
  const file = path.join(folder, name);
  writeFileSync(file, text);
  return file;
}
