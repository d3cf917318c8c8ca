import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/run-cli.js";

const run = promisify(execFile);
const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, "package.json"), "utf8")) as { engines: { node: string } };

describe("the Node versions relcast declares", () => {
  it("include 20.19 (the floor), 22 and 24, and the Node running the tests", () => {
    for (const version of ["20.19.0", "22.0.0", "24.0.0", process.versions.node]) expect(semver.satisfies(version, pkg.engines.node), version).toBe(true);
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
