import { execFileSync } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { configJsonSchema, configJsonSchemaText, configReferenceMarkdown, REFERENCE_FILE, SCHEMA_FILE } from "../../scripts/config-reference.mjs";
import { configSchema } from "../../src/config/schema.js";
import { DEFAULT_APPCAST_ITEMS } from "../../src/domain/appcast.js";
import { DEFAULT_DIFF_LIMIT_BYTES } from "../../src/sparkle/delta/delta-create.js";
import { DEFAULT_MAXIMUM_DELTAS } from "../../src/steps/deltas/index.js";
import { CACHE_IMMUTABLE, CACHE_NO_CACHE } from "../../src/store/content-types.js";
import { DEFAULT_PART_SIZE, DEFAULT_QUEUE_SIZE, DEFAULT_REQUEST_TIMEOUT_MS } from "../../src/store/s3-options.js";
import { REPO_ROOT } from "../helpers/run-cli.js";

interface Node { type?: string; description?: string; default?: unknown; properties?: Record<string, Node> }

/** Every key of the schema with its JSON Schema node, nested ones as `appcast.maxAppcastItems`. */
function keys(node: Node, prefix = ""): Array<[string, Node]> {
  return Object.entries(node.properties ?? {}).flatMap(([k, v]) => [[prefix + k, v] as [string, Node], ...keys(v, `${prefix}${k}.`)]);
}

/**
 * Python's jsonschema (an independent implementation of JSON Schema 2020-12)
 * judges each config against the shipped file: the error messages, or [] for a valid one.
 */
function validateWithPython(schemaFile: string, configs: unknown[]): string[][] {
  const program = [
    "import json, sys, jsonschema",
    "schema = json.load(open(sys.argv[1]))",
    "jsonschema.Draft202012Validator.check_schema(schema)",
    "v = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)",
    "print(json.dumps([[e.message for e in v.iter_errors(c)] for c in json.load(sys.stdin)]))",
  ].join("\n");
  return JSON.parse(execFileSync("python3", ["-c", program, schemaFile], { input: JSON.stringify(configs), encoding: "utf8" })) as string[][];
}

/** Every ```json block of the README and docs that is a whole config (it names a pluginId). */
async function documentedConfigs(): Promise<Array<[string, unknown]>> {
  const files = ["README.md", ...(await readdir(path.join(REPO_ROOT, "docs"))).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
  const found: Array<[string, unknown]> = [];
  for (const file of files) {
    const text = await readFile(path.join(REPO_ROOT, file), "utf8");
    for (const m of text.matchAll(/```json\n([\s\S]*?)```/g)) if (m[1]!.includes('"pluginId"')) found.push([file, JSON.parse(m[1]!)]);
  }
  return found;
}

const minimal = { pluginId: "bridge-plugin", displayName: "Bridge Plugin", publisher: "Example Tools", appUrl: "https://updates.example.com" };

/** A config that sets every key there is. */
const everyKey = {
  $schema: "./node_modules/relcast/relcast.schema.json",
  ...minimal,
  channel: "beta",
  timezone: "Europe/Berlin",
  store: "s3://bucket/plugins",
  assistantIntegration: ["Open the disk image", "Drag the plugin to Plugins"],
  artifactType: "dmg",
  appcast: { maxAppcastItems: 0, phasedRolloutInterval: 86400, fullReleaseNotesUrl: "https://example.com/history.html", signedFeed: true, releaseNotes: "page" },
  deltas: { maximum: 3, compression: "bzip2", diffLimitMiB: 8 },
  s3: {
    region: "auto", endpoint: "http://127.0.0.1:9000", forcePathStyle: true, requestChecksumCalculation: "WHEN_REQUIRED",
    requestTimeoutMs: 60000, uploadConcurrency: 8, partSizeMiB: 16, conditionalWrites: "prove",
  },
  cacheControl: { immutable: "public, max-age=600", mutable: "no-store" },
};

describe("config reference generated from the zod schema", () => {
  it(`${SCHEMA_FILE} and ${REFERENCE_FILE} are what src/config/schema.ts gives (else: npm run config-reference)`, async () => {
    const shipped = await readFile(path.join(REPO_ROOT, SCHEMA_FILE), "utf8");
    const reference = await readFile(path.join(REPO_ROOT, REFERENCE_FILE), "utf8");
    expect(shipped, `${SCHEMA_FILE} is out of date: run npm run config-reference and commit it`).toBe(configJsonSchemaText(configSchema));
    expect(reference, `${REFERENCE_FILE} is out of date: run npm run config-reference and commit it`).toBe(configReferenceMarkdown(configSchema));
  });

  it("the package ships the JSON Schema", async () => {
    const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, "package.json"), "utf8")) as { files: string[] };
    expect(pkg.files).toContain(SCHEMA_FILE);
  });

  it("every key has a description, and every key is in the reference", () => {
    const all = keys(configJsonSchema(configSchema) as Node);
    expect(all.length).toBeGreaterThan(20);
    expect(all.filter(([, node]) => !node.description?.trim()).map(([key]) => key)).toEqual([]);
    const reference = configReferenceMarkdown(configSchema);
    expect(all.filter(([key]) => !reference.includes(`| \`${key}\` |`)).map(([key]) => key)).toEqual([]);
  });

  it("the defaults it documents are the ones the code applies", () => {
    const defaults = Object.fromEntries(keys(configJsonSchema(configSchema) as Node).map(([key, node]) => [key, node.default]));
    const MiB = 1024 * 1024;
    expect(defaults).toMatchObject({
      channel: "stable",
      store: "file://./public-store",
      "appcast.maxAppcastItems": DEFAULT_APPCAST_ITEMS,
      "deltas.maximum": DEFAULT_MAXIMUM_DELTAS,
      "deltas.diffLimitMiB": DEFAULT_DIFF_LIMIT_BYTES / MiB,
      "s3.requestTimeoutMs": DEFAULT_REQUEST_TIMEOUT_MS,
      "s3.uploadConcurrency": DEFAULT_QUEUE_SIZE,
      "s3.partSizeMiB": DEFAULT_PART_SIZE / MiB,
      "cacheControl.immutable": CACHE_IMMUTABLE,
      "cacheControl.mutable": CACHE_NO_CACHE,
    });
  });

  it("an independent JSON Schema validator and relcast agree: documented and complete configs pass, misspellings and wrong types fail", async () => {
    const documented = await documentedConfigs();
    expect(documented.length).toBeGreaterThan(0);
    const cases: Array<[string, unknown, boolean]> = [
      ...documented.map(([file, config]): [string, unknown, boolean] => [`the config in ${file}`, config, true]),
      ["the least a config holds", minimal, true],
      ["every key set", everyKey, true],
      ["a misspelled key (pluginID)", { ...minimal, pluginID: "x" }, false],
      ["a misspelled nested key (appcast.maxAppcastItem)", { ...minimal, appcast: { maxAppcastItem: 5 } }, false],
      ["a misspelled group (apcast)", { ...minimal, apcast: {} }, false],
      ["a required key missing (publisher)", { ...minimal, publisher: undefined }, false],
      ["a number given as text (deltas.maximum)", { ...minimal, deltas: { maximum: "5" } }, false],
      ["a value out of range (s3.partSizeMiB 4)", { ...minimal, s3: { partSizeMiB: 4 } }, false],
      ["a value not in the list (s3.conditionalWrites)", { ...minimal, s3: { conditionalWrites: "maybe" } }, false],
      ["a pluginId with capitals", { ...minimal, pluginId: "Bridge" }, false],
    ];
    const verdicts = validateWithPython(path.join(REPO_ROOT, SCHEMA_FILE), cases.map(([, config]) => JSON.parse(JSON.stringify(config)) as unknown));
    const python = cases.map(([name], i) => [name, verdicts[i]!.length === 0]);
    const relcast = cases.map(([name, config]) => [name, configSchema.safeParse(JSON.parse(JSON.stringify(config))).success]);
    const expected = cases.map(([name, , valid]) => [name, valid]);
    expect(python).toEqual(expected);
    expect(relcast).toEqual(expected);
    // The validator's reason for the misspelling names the key.
    expect(verdicts[documented.length + 2]!.join(" ")).toContain("pluginID");
  });
});
