import { printable } from "../../core/printable.js";
import type { Command } from "commander";
import { loadConfig, DEFAULT_CONFIG_FILE } from "../../config/load-config.js";
import { RelcastError } from "../../core/errors.js";
import { BRIDGE_PORT, checkBridge, formatBridgeBody } from "../../install/bridge-status.js";

interface VerifyInstallFlags {
  port: string;
  host: string;
  config?: string;
  timeout: string;
}

function parseIntFlag(flag: string, text: string, max: number, hint: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > max) throw new RelcastError("E_USAGE", `${flag} ${text} is not a whole number from 1 to ${max}`, hint);
  return n;
}

/** Install lines from the config; an absent default config is fine, an explicit bad one is not. */
async function installInstructions(flags: VerifyInstallFlags): Promise<string[]> {
  try {
    return (await loadConfig(flags.config)).assistantIntegration ?? [];
  } catch (err) {
    if (flags.config === undefined && err instanceof RelcastError && err.message.startsWith("config file not found")) return [];
    throw err;
  }
}

export function registerVerifyInstall(program: Command): void {
  program
    .command("verify-install")
    .description(`check that an installed plugin's local bridge answers on 127.0.0.1:${BRIDGE_PORT} (GET /v1/status)`)
    .option("--port <n>", "bridge port", String(BRIDGE_PORT))
    .option("--host <host>", "loopback address of the bridge", "127.0.0.1")
    .option("--timeout <ms>", "how long to wait for an answer", "3000")
    .option("--config <file>", `config whose assistantIntegration lines are the install instructions (default ${DEFAULT_CONFIG_FILE}, optional)`)
    .action(async (flags: VerifyInstallFlags) => {
      const port = parseIntFlag("--port", flags.port, 65535, `pass the bridge's TCP port (default ${BRIDGE_PORT})`);
      const timeoutMs = parseIntFlag("--timeout", flags.timeout, 60_000, "pass milliseconds, e.g. --timeout 3000");
      const instructions = await installInstructions(flags);
      const result = await checkBridge(flags.host, port, timeoutMs);
      if (!result.running) {
        const lines = instructions.length > 0 ? instructions : ["Install the plugin from its disk image, start it, then run this check again."];
        process.stderr.write(`The bridge is not running: nothing answered at ${result.url} (${result.reason}).\nTo install and start it:\n${lines.map((l, i) => `  ${i + 1}. ${l}`).join("\n")}\n`);
        throw new RelcastError("E_NETWORK", `the local bridge is not running on ${flags.host}:${port}`, "follow the install steps above, then run `relcast verify-install` again");
      }
      const { answer } = result;
      process.stdout.write(`${answer.url} answered HTTP ${answer.status}${answer.contentType ? ` (${printable(answer.contentType)})` : ""}\n${printable(formatBridgeBody(answer), { keepNewlines: true })}\n`);
      if (answer.status < 200 || answer.status > 299) {
        throw new RelcastError("E_VERIFY", `the bridge on ${flags.host}:${port} is running but answered HTTP ${answer.status}`, "see its answer above; restart the plugin or reinstall it from the latest disk image");
      }
    });
}
