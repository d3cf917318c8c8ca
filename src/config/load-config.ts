import { readFile } from "node:fs/promises";
import path from "node:path";
import { RelcastError } from "../core/errors.js";
import { configSchema, isValidTimeZone, type RelcastConfig } from "./schema.js";
import { describeZodIssues } from "../core/zod-message.js";

export const DEFAULT_CONFIG_FILE = "relcast.config.json";

export interface ConfigOverrides {
  store?: string;
  channel?: string;
  timezone?: string;
}

/**
 * Reads and validates the config file. Flags override file values and are
 * validated by the same schema, so a bad flag gets the same kind of message.
 */
export async function loadConfig(file: string | undefined, overrides: ConfigOverrides = {}): Promise<RelcastConfig> {
  const configPath = path.resolve(file ?? DEFAULT_CONFIG_FILE);
  let text: string;
  try {
    text = await readFile(configPath, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new RelcastError(
      "E_CONFIG",
      code === "ENOENT" ? `config file not found: ${configPath}` : `cannot read config file ${configPath} (${code})`,
      `create ${DEFAULT_CONFIG_FILE} with pluginId, displayName, publisher and appUrl, or pass --config <file>`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new RelcastError("E_CONFIG", `${configPath} is not valid JSON: ${(err as Error).message}`, "fix the JSON syntax of the config file");
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new RelcastError("E_CONFIG", `${configPath} must hold a JSON object`, "see the README for an example config");
  }
  const merged: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  for (const [k, v] of Object.entries(overrides)) if (v !== undefined) merged[k] = v;
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) {
    throw new RelcastError("E_CONFIG", describeZodIssues(parsed.error, configPath, merged, configSchema), "fix the field named above (flags override the file)");
  }
  const timezone = parsed.data.timezone ?? machineTimeZone();
  return { ...parsed.data, timezone, baseDir: path.dirname(configPath), source: configPath };
}

export function machineTimeZone(): string {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return zone && isValidTimeZone(zone) ? zone : "UTC";
}
