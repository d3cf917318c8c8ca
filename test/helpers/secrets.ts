import { readFile, stat } from "node:fs/promises";
import type { Logger } from "../../src/core/logger.js";
import { capturedOutput } from "./run-cli.js";
import { walkFiles } from "./walk-files.js";

/**
 * Every secret a test creates (signing keys, client and HMAC secrets,
 * tokens) and every store folder a test writes, so the suite-wide scan in
 * test/setup/secrets-scan.ts can check that none of them leaks into output,
 * logs or the store.
 */
export const registeredSecrets = new Set<string>();
export const registeredStoreDirs = new Set<string>();

export function registerSecret(...secrets: string[]): void {
  for (const s of secrets) if (s.length >= 8) registeredSecrets.add(s);
}

export function registerStoreDir(dir: string): void {
  registeredStoreDirs.add(dir);
}

/** A logger whose lines go to the captured output (what the gateway would log). */
export function capturingLogger(): Logger {
  const push = (level: string) => (message: string, ...rest: unknown[]) => {
    capturedOutput.push(`${level} ${message} ${rest.map((r) => JSON.stringify(r)).join(" ")}`);
  };
  return { info: push("info"), warn: push("warn"), error: push("error"), debug: push("debug"), group: (title, fn) => (push("group")(title), fn()) };
}

/** Where each registered secret shows up: captured output and store files. */
export async function secretLeaks(): Promise<string[]> {
  const leaks: string[] = [];
  const secrets = [...registeredSecrets];
  const shown = (s: string) => `${s.slice(0, 3)}… (${s.length} chars)`;
  for (const [i, raw] of capturedOutput.entries()) {
    // `::add-mask::<value>` is how a step tells the Actions runner what to mask: the runner
    // consumes the line and never shows it, so it is the one place a secret may be written.
    const out = raw.replace(/^::add-mask::.*$/gm, "");
    for (const s of secrets) if (out.includes(s)) leaks.push(`secret ${shown(s)} in captured output #${i}: ${out.slice(Math.max(0, out.indexOf(s) - 60), out.indexOf(s)).replace(/\s+/g, " ")}…`);
  }
  for (const dir of registeredStoreDirs) {
    for await (const file of walkFiles(dir)) {
      if ((await stat(file)).size > 64 << 20) continue;
      const text = (await readFile(file)).toString("latin1");
      for (const s of secrets) if (text.includes(s)) leaks.push(`secret ${shown(s)} in store file ${file}`);
    }
  }
  return leaks;
}
