// `npm run config-reference`: writes relcast.schema.json (the JSON Schema of
// relcast.config.json, shipped in the package so editors complete and check
// the config) and docs/config.md (the same keys for people), both generated
// from the zod schema in src/config/schema.ts, its descriptions included.
// `--check` writes nothing and exits 1 when either file differs from what the
// schema gives (test/config/config-reference.test.ts does the same check).
//
// The functions take the schema as an argument: the script reads the built
// one (dist/, built first when stale), the test the source one, so both see
// the same bytes.
import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { z } from "zod";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const SCHEMA_FILE = "relcast.schema.json";
export const REFERENCE_FILE = path.join("docs", "config.md");

/** Drops zod's ±2^53 bounds of a plain integer: noise for a reader and an editor alike. */
function withoutSafeIntegerBounds(node) {
  if (Array.isArray(node)) return node.map(withoutSafeIntegerBounds);
  if (node === null || typeof node !== "object") return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "maximum" && value === Number.MAX_SAFE_INTEGER) continue;
    if (key === "minimum" && value === Number.MIN_SAFE_INTEGER) continue;
    out[key] = withoutSafeIntegerBounds(value);
  }
  return out;
}

/** The JSON Schema of a config file as a user writes it (input side: fields with defaults are optional). */
export function configJsonSchema(schema) {
  return withoutSafeIntegerBounds(z.toJSONSchema(schema, { io: "input", unrepresentable: "throw" }));
}

export function configJsonSchemaText(schema) {
  return JSON.stringify(configJsonSchema(schema), null, 2) + "\n";
}

const code = (value) => "`" + String(value).replaceAll("|", "\\|") + "`";
const cell = (text) => String(text).replaceAll("|", "\\|").replace(/\s+/g, " ");

/** A property's type as a person reads it: `integer, 0 to 50`, `"inline" | "page"`, `string (URL)`. */
function typeOf(prop) {
  if (prop.enum) return `one of ${prop.enum.map((v) => code(JSON.stringify(v))).join(", ")}`;
  if (prop.const !== undefined) return code(JSON.stringify(prop.const));
  if (prop.type === "array") return `array of ${typeOf(prop.items ?? {})}s`;
  if (prop.type === "object") return "object";
  const parts = [];
  if (prop.minimum !== undefined && prop.maximum !== undefined) parts.push(`${prop.minimum} to ${prop.maximum}`);
  else if (prop.minimum !== undefined) parts.push(`≥ ${prop.minimum}`);
  else if (prop.maximum !== undefined) parts.push(`≤ ${prop.maximum}`);
  if (prop.format === "uri") parts.push("URL");
  if (prop.maxLength !== undefined) parts.push(`at most ${prop.maxLength} characters`);
  if (prop.minLength !== undefined && prop.minLength > 0 && prop.maxLength === undefined && !prop.pattern) parts.push("not empty");
  if (prop.pattern) parts.push(`matches ${code(prop.pattern)}`);
  return parts.length ? `${prop.type ?? "any"} (${parts.join(", ")})` : (prop.type ?? "any");
}

/** One table per object: its keys, their type, whether required, default and description. */
function objectSection(title, prefix, node, out) {
  const required = new Set(node.required ?? []);
  const rows = Object.entries(node.properties ?? {});
  out.push(`## ${title}`, "");
  if (prefix && node.description) out.push(node.description, "");
  out.push("| key | type | default | what |", "|---|---|---|---|");
  for (const [key, prop] of rows) {
    const name = code(prefix + key);
    const fallback = required.has(key) ? "required" : prop.default === undefined ? "none" : code(JSON.stringify(prop.default));
    const what = prop.type === "object" ? `${prop.description ?? ""} See [${prefix}${key}](#${(prefix + key).toLowerCase().replace(/[^a-z0-9]+/g, "")}).` : (prop.description ?? "");
    out.push(`| ${name} | ${cell(typeOf(prop))} | ${fallback} | ${cell(what)} |`);
  }
  out.push("");
  for (const [key, prop] of rows) if (prop.type === "object" && prop.properties) objectSection(`${prefix}${key}`, `${prefix}${key}.`, prop, out);
}

/** docs/config.md: how to point an editor at the schema, then every key. */
export function configReferenceMarkdown(schema) {
  const json = configJsonSchema(schema);
  const out = [
    "# relcast.config.json reference",
    "",
    "<!-- Generated from src/config/schema.ts by `npm run config-reference`; do not edit by hand. -->",
    "",
    `${json.description} Every command reads \`relcast.config.json\` in the current folder, or the file \`--config\` names.`,
    "A key that is missing, misspelled or of the wrong type stops the command (exit 3) with a message naming the key and the file.",
    "",
    "## Completion and checking in your editor",
    "",
    `The package ships this reference as a JSON Schema, \`${SCHEMA_FILE}\` in the package's root folder. \`relcast init\` writes a`,
    "`$schema` line that points at it, so VS Code, JetBrains IDEs and other editors with JSON Schema support complete the keys,",
    "show these descriptions and mark a misspelled key or a wrong type as you type:",
    "",
    "```json",
    "{",
    `  "$schema": "./node_modules/relcast/${SCHEMA_FILE}",`,
    '  "pluginId": "bridge-plugin",',
    '  "displayName": "Bridge Plugin",',
    '  "publisher": "Example Tools",',
    '  "appUrl": "https://updates.example.com",',
    '  "store": "file://./public-store"',
    "}",
    "```",
    "",
    "- **relcast installed in your project** (`npm install --save-dev ./relcast-<version>.tgz` or from git): the path above,",
    "  relative to the config file. `relcast init` writes the path from the config's folder to the installed package, so a",
    "  config in a subfolder of the project gets `../node_modules/relcast/…`.",
    "- **`npx relcast` in such a project** runs that same installed copy: the same path.",
    "- **relcast run from anywhere else** (a global install, a checkout of relcast, an `npx` download cache): `init` still",
    "  writes `./node_modules/relcast/" + SCHEMA_FILE + "`, the place the file will be once relcast is a dependency of the",
    "  project; a path into a global or temporary folder would break on the next machine.",
    "- **Only the GitHub Action** (relcast is not a dependency of the project): point `$schema` at the file in the relcast",
    "  repository at the tag or commit your workflow pins in `uses: relcast/relcast@…`, e.g.",
    "  `https://raw.githubusercontent.com/relcast/relcast/<that tag or commit>/" + SCHEMA_FILE + "`, or remove the line. relcast ignores",
    "  `$schema`; the editor does not need it to save the file.",
    "",
    "To check a config without relcast, any JSON Schema (2020-12) validator works, e.g. with Python's `jsonschema`:",
    "",
    "```sh",
    `python3 -c 'import json,jsonschema; jsonschema.validate(json.load(open("relcast.config.json")), json.load(open("node_modules/relcast/${SCHEMA_FILE}")))'`,
    "```",
    "",
    "relcast's own check is stricter: it also refuses characters an appcast cannot hold, unknown time-zone names and",
    "release-notes URLs that are not http(s), which a JSON Schema cannot express.",
    "",
  ];
  objectSection("Keys", "", json, out);
  return out.join("\n").replace(/\n+$/, "\n");
}

async function main() {
  const check = process.argv.includes("--check");
  execFileSync(process.execPath, [path.join(ROOT, "scripts", "build.mjs"), "--if-stale"], { stdio: "inherit" });
  const { configSchema } = await import(pathToFileURL(path.join(ROOT, "dist", "src", "config", "schema.js")).href);
  const wanted = [[SCHEMA_FILE, configJsonSchemaText(configSchema)], [REFERENCE_FILE, configReferenceMarkdown(configSchema)]];
  let stale = 0;
  for (const [file, text] of wanted) {
    const current = await readFile(path.join(ROOT, file), "utf8").catch(() => undefined);
    if (current === text) continue;
    stale++;
    if (check) console.error(`${file} is out of date with src/config/schema.ts: run npm run config-reference`);
    else {
      await writeFile(path.join(ROOT, file), text);
      console.error(`wrote ${file}`);
    }
  }
  if (check && stale) process.exitCode = 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
