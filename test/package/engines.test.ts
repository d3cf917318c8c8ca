import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/run-cli.js";

const run = promisify(execFile);
const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, "package.json"), "utf8")) as { engines: { node: string } };

/** The majors a range accepts (any release of the major), e.g. ^20.19.0 || ^22 → [20, 22]. */
function majorsOf(range: string): number[] {
  return Array.from({ length: 100 }, (_, m) => m).filter((m) => semver.intersects(`${m}.x`, range));
}

/** .github/workflows/ci.yml as PyYAML (an independent parser) reads it. */
async function ciWorkflow(): Promise<any> {
  const { stdout } = await run("python3", ["-c", "import sys, json, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))", path.join(REPO_ROOT, ".github", "workflows", "ci.yml")]);
  return JSON.parse(stdout);
}

describe("the Node versions relcast declares", () => {
  it("include 20.19 (the floor), 22 and 24, and the Node running the tests", () => {
    for (const version of ["20.19.0", "22.0.0", "24.0.0", process.versions.node]) expect(semver.satisfies(version, pkg.engines.node), version).toBe(true);
  });

  it("are each tested by CI: the test job's matrix has one Node per major engines accepts, the floor exactly", async () => {
    const job = (await ciWorkflow()).jobs.test;
    const nodes = (job.strategy.matrix.node as Array<string | number>).map(String);
    expect(job.strategy["fail-fast"]).toBe(false);
    expect(job.steps.find((s: { uses?: string }) => s.uses?.startsWith("actions/setup-node@")).with["node-version"]).toBe("${{ matrix.node }}");
    expect(nodes.map((n) => semver.coerce(n)!.major).sort((a, b) => a - b)).toEqual(majorsOf(pkg.engines.node));
    expect(nodes).toContain(semver.minVersion(pkg.engines.node)!.version);
    // A major CI names must be accepted as CI installs it: the newest release of it, or the exact version given.
    for (const n of nodes) expect(semver.intersects(n.includes(".") ? n : `${n}.x`, pkg.engines.node), n).toBe(true);
  });

  it("are supported by every production dependency, direct or not, as each declares in its engines", async () => {
    const { stdout } = await run("npm", ["ls", "--omit=dev", "--all", "--parseable"], { cwd: REPO_ROOT, maxBuffer: 16 << 20 });
    const folders = [...new Set(stdout.trim().split("\n").slice(1))];
    expect(folders.length).toBeGreaterThan(20);
    const narrower: string[] = [];
    for (const folder of folders) {
      const dep = JSON.parse(await readFile(path.join(folder, "package.json"), "utf8")) as { name: string; version: string; engines?: { node?: string } };
      const range = dep.engines?.node;
      if (range !== undefined && !semver.subset(pkg.engines.node, range)) narrower.push(`${dep.name}@${dep.version} (${range})`);
    }
    expect(narrower).toEqual([]);
  });

  it("creating an S3 client prints no AWS SDK Node-version warning", async () => {
    const script = `import { createS3Client } from ${JSON.stringify(path.join(REPO_ROOT, "dist/src/store/s3-client.js"))};
      createS3Client({ bucket: "b", prefix: "", region: "us-east-1", endpoint: "http://127.0.0.1:9" });
      await new Promise((r) => setTimeout(r, 50));`;
    const env = { ...process.env };
    delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
    const { stderr } = await run(process.execPath, ["--input-type=module", "-e", script], { env });
    expect(stderr).toBe("");
  });
});
