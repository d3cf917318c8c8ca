import { execFileSync } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limit } from "../helpers/release-kit.js";
import { REPO_ROOT, runCli } from "../helpers/run-cli.js";
import { registerSecret } from "../helpers/secrets.js";

/** The printed entries inside a plist <dict>, read by Python's plistlib (an independent plist parser). */
function readPlistEntries(snippet: string): Record<string, string> {
  const plist = `<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict>\n${snippet}</dict></plist>\n`;
  return JSON.parse(execFileSync("python3", ["-c", "import sys, json, plistlib; print(json.dumps(plistlib.loads(sys.stdin.buffer.read())))"], { input: plist, encoding: "utf8" }));
}

describe("relcast init", () => {
  let dir: string;
  beforeAll(async () => {
    dir = path.join(await mkdtemp(path.join(os.tmpdir(), "relcast-init-")), "Bridge Plugin");
    await mkdir(dir);
  });
  afterAll(async () => {
    await rm(path.dirname(dir), { recursive: true, force: true });
  });

  it("writes a starter config and a 0600 key, and prints SUFeedURL and SUPublicEDKey for Info.plist", async () => {
    const res = await runCli(["init", "--publisher", "Example Tools", "--app-url", "https://updates.example.com/"], { cwd: dir });
    expect(res.code, res.stderr).toBe(0);
    const key = (await readFile(path.join(dir, "relcast-signing-key.txt"), "utf8")).trim();
    registerSecret(key);
    expect(((await stat(path.join(dir, "relcast-signing-key.txt"))).mode & 0o777).toString(8)).toBe("600");
    expect(JSON.parse(await readFile(path.join(dir, "relcast.config.json"), "utf8"))).toEqual({
      // No relcast installed here or above: where the schema will be once it is a dependency of the project.
      $schema: "./node_modules/relcast/relcast.schema.json",
      pluginId: "bridge-plugin", displayName: "Bridge Plugin", publisher: "Example Tools", appUrl: "https://updates.example.com/",
      channel: "stable", store: "file://./public-store",
    });
    const entries = readPlistEntries(res.stdout);
    const publicKey = await runCli(["keys", "public", "--key-file", "relcast-signing-key.txt"], { cwd: dir });
    expect(entries).toEqual({ SUFeedURL: "https://updates.example.com/api/v1/plugins/bridge-plugin/appcast.xml", SUPublicEDKey: publicKey.stdout.trim() });
    expect(res.stderr).toContain("wrote relcast.config.json");
    expect(res.stderr + res.stdout).not.toContain(key);
  });

  it("run again, replaces neither file and prints the same entries", async () => {
    const before = [await readFile(path.join(dir, "relcast.config.json")), await readFile(path.join(dir, "relcast-signing-key.txt"))];
    const first = readPlistEntries((await runCli(["init"], { cwd: dir })).stdout);
    const again = await runCli(["init", "--plugin-id", "other", "--app-url", "https://other.example.com"], { cwd: dir });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("kept the existing relcast.config.json");
    expect(again.stderr).toContain("kept the existing signing key");
    expect(readPlistEntries(again.stdout)).toEqual(first);
    expect([await readFile(path.join(dir, "relcast.config.json")), await readFile(path.join(dir, "relcast-signing-key.txt"))]).toEqual(before);
  });

  it("points $schema at the relcast installed in the config's folder or the nearest one above it", async () => {
    const project = await mkdtemp(path.join(os.tmpdir(), "relcast-init-"));
    try {
      const installed = path.join(project, "node_modules", "relcast");
      await mkdir(installed, { recursive: true });
      await copyFile(path.join(REPO_ROOT, "relcast.schema.json"), path.join(installed, "relcast.schema.json"));
      await mkdir(path.join(project, "plugins", "bridge"), { recursive: true });
      const top = await runCli(["init", "--key-file", "top-key.txt"], { cwd: project });
      const nested = await runCli(["init", "--config", "plugins/bridge/relcast.config.json", "--key-file", "nested-key.txt"], { cwd: project });
      expect([top.code, nested.code], top.stderr + nested.stderr).toEqual([0, 0]);
      const schemaOf = async (file: string) => (JSON.parse(await readFile(path.join(project, file), "utf8")) as { $schema: string }).$schema;
      expect(await schemaOf("relcast.config.json")).toBe("./node_modules/relcast/relcast.schema.json");
      expect(await schemaOf("plugins/bridge/relcast.config.json")).toBe("../../node_modules/relcast/relcast.schema.json");
      // The reference resolves, as an editor resolves it, to the installed file.
      const resolved = path.resolve(project, "plugins", "bridge", await schemaOf("plugins/bridge/relcast.config.json"));
      expect(await readFile(resolved, "utf8")).toBe(await readFile(path.join(REPO_ROOT, "relcast.schema.json"), "utf8"));
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });

  it("keeps the key out of git: git add -A in a repository stages the config and the .gitignore, never the key", async () => {
    const repo = path.join(path.dirname(dir), "repo");
    await mkdir(path.join(repo, "keys"), { recursive: true });
    const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: repo, encoding: "utf8" });
    git("init", "-q");
    // An existing .gitignore without a final newline keeps its line; a key name with glob characters is matched literally.
    await writeFile(path.join(repo, ".gitignore"), "build/");
    const res = await runCli(["init"], { cwd: repo });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain("added relcast-signing-key.txt to .gitignore, so git add -A leaves the key out");
    const nested = await runCli(["init", "--key-file", "keys/key[1].txt"], { cwd: repo });
    expect(nested.code, nested.stderr).toBe(0);
    registerSecret((await readFile(path.join(repo, "relcast-signing-key.txt"), "utf8")).trim());
    registerSecret((await readFile(path.join(repo, "keys", "key[1].txt"), "utf8")).trim());
    await writeFile(path.join(repo, "keys", "key1.txt"), "not the key: the pattern must not match it");
    git("add", "-A");
    expect(git("ls-files").trim().split("\n").sort()).toEqual([".gitignore", "keys/.gitignore", "keys/key1.txt", "relcast.config.json"]);
    expect(await readFile(path.join(repo, ".gitignore"), "utf8")).toBe("build/\n# relcast signing key (relcast init): never commit it\n/relcast-signing-key.txt\n");
    // Run again: the line is not added twice, and init says the key is already ignored.
    const again = await runCli(["init"], { cwd: repo });
    expect(again.stderr).toContain("relcast-signing-key.txt is already in its folder's .gitignore");
    expect((await readFile(path.join(repo, ".gitignore"), "utf8")).match(/relcast-signing-key/g)).toHaveLength(1);
  });

  // Independent refusals, each in a folder of its own that it checks is left empty: they run three at a time
  // (each its own CLI process).
  const slot = limit(3);
  it.concurrent.each([
    [["--app-url", 'https://x.example/a"b'], /appUrl.*U\+0022.*percent-encode/s],
    [["--app-url", "https://ünï.example"], /appUrl.*U\+00FC.*punycode/s],
    [["--app-url", "https://x.example/%zz"], /appUrl.*%25/s],
    [["--store", "s3://"], /store.*"s3:\/\/" names no valid S3 bucket.*s3:\/\/bucket/s],
    [["--store", "ftp://x"], /store.*unsupported store URL "ftp:\/\/x"/s],
    [["--store", "s3://Bad_Bucket"], /store.*no valid S3 bucket/s],
    [["--store", "file://host/x"], /store.*has a host part/s],
    [["--display-name", "Bridge \u202Egnp.exe"], /displayName.*U\+202E \(RIGHT-TO-LEFT OVERRIDE\)/s],
    [["--publisher", "Example \u2066Tools\u2069"], /publisher.*U\+2066 \(LEFT-TO-RIGHT ISOLATE\)/s],
  ])("refuses %j (what every later command would refuse, or Sparkle could not read), naming it, and writes nothing", (flags, message) => slot(async () => {
    const empty = await mkdtemp(path.join(os.tmpdir(), "relcast-init-"));
    try {
      const res = await runCli(["init", ...flags], { cwd: empty });
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toMatch(message);
      expect(await readdir(empty)).toEqual([]);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  }));

  it("--key-file edge cases: control characters and folder names are refused with nothing written, a missing folder is created, a key outside the repository touches nothing outside it", async () => {
    const base = path.join(path.dirname(dir), "edges");
    const repo = path.join(base, "repo");
    await mkdir(repo, { recursive: true });
    execFileSync("git", ["init", "-q"], { cwd: repo });
    // Three refusals that write nothing (each run checks the repository after it): run at once.
    await Promise.all(["evil\nname.txt", "tab\tkey.txt", "keys/"].map(async (bad) => {
      const res = await runCli(["init", "--key-file", bad], { cwd: repo });
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toMatch(/control character|name a file/);
      expect((await readdir(repo)).sort()).toEqual([".git"]);
    }));
    const nested = await runCli(["init", "--key-file", "secrets/deep/key.txt"], { cwd: repo });
    expect(nested.code, nested.stderr).toBe(0);
    registerSecret((await readFile(path.join(repo, "secrets/deep/key.txt"), "utf8")).trim());
    expect(await readFile(path.join(repo, "secrets/deep/.gitignore"), "utf8")).toContain("/key.txt");
    const outside = await runCli(["init", "--key-file", "../outside-key.txt"], { cwd: repo });
    expect(outside.code, outside.stderr).toBe(0);
    registerSecret((await readFile(path.join(base, "outside-key.txt"), "utf8")).trim());
    expect(outside.stderr).toContain("outside the repository");
    expect((await readdir(base)).sort()).toEqual(["outside-key.txt", "repo"]);
  });

  it("a bad flag value names the field and writes nothing", async () => {
    const empty = await mkdtemp(path.join(os.tmpdir(), "relcast-init-"));
    try {
      const res = await runCli(["init", "--plugin-id", "Bad Id"], { cwd: empty });
      expect(res.code).toBe(2);
      expect(res.stderr).toContain("pluginId");
      expect(await readdir(empty)).toEqual([]);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
