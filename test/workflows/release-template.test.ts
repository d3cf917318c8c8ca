import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildOrderViolations, describeViolation, type BuildOrderEntry } from "../../src/domain/build-order.js";
import { REPO_ROOT } from "../helpers/run-cli.js";

/**
 * What the copyable release workflow promises, read by an independent YAML
 * parser (PyYAML): no tag's run is dropped, every release gets a build
 * number that ranks where its version does, signing and notarization have
 * their place, and both downloads get a build provenance attestation.
 */
interface Step { id?: string; name?: string; uses?: string; run?: string; if?: string; env?: Record<string, string>; with?: Record<string, string> }
interface Workflow { on: any; permissions?: Record<string, string>; concurrency?: unknown; jobs: Record<string, { concurrency?: unknown; permissions?: Record<string, string>; steps: Step[] }> }

function readYaml(file: string): Workflow {
  return JSON.parse(execFileSync("python3", ["-c", "import sys, json, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))", path.join(REPO_ROOT, file)], { encoding: "utf8" }));
}

const TEMPLATE = "templates/github-release.yml";
const TAG_WORKFLOWS = [TEMPLATE, ".github/workflows/release.yml"];

/** A concurrency setting whose group is the same for two different tags would let GitHub cancel a pending tag's run. */
function sharedGroup(concurrency: unknown): string | undefined {
  if (concurrency === undefined) return undefined;
  const group = typeof concurrency === "string" ? concurrency : String((concurrency as { group?: unknown }).group ?? "");
  return /\$\{\{[^}]*\bgithub\.(ref|ref_name|sha|run_id)\b[^}]*\}\}/.test(group) ? undefined : group;
}

const dir = mkdtempSync(path.join(os.tmpdir(), "relcast-template-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs a step's script with bash as the runner does (TAG and GITHUB_OUTPUT
 * set) once per tag, each in its own subshell of one bash process; returns
 * each run's exit code, outputs and printed lines.
 */
function runStep(step: Step, tags: string[]): Array<{ code: number; outputs: Record<string, string>; stdout: string }> {
  const script = tags.map((tag, i) => [
    `( export TAG=${JSON.stringify(tag)} GITHUB_OUTPUT="$OUT/${i}"; : >"$GITHUB_OUTPUT"`, step.run!, `) >"$OUT/${i}.log" 2>&1; echo $? >"$OUT/${i}.code"`,
  ].join("\n")).join("\n");
  const out = mkdtempSync(path.join(dir, "run-"));
  execFileSync("bash", ["-c", script], { env: { PATH: process.env.PATH, OUT: out } });
  return tags.map((_, i) => ({
    code: Number(readFileSync(path.join(out, `${i}.code`), "utf8")),
    outputs: Object.fromEntries(readFileSync(path.join(out, String(i)), "utf8").split("\n").filter(Boolean).map((l) => l.split("=", 2) as [string, string])),
    stdout: readFileSync(path.join(out, `${i}.log`), "utf8"),
  }));
}

describe.each(TAG_WORKFLOWS)("%s", (file) => {
  const workflow = readYaml(file);
  const steps = Object.values(workflow.jobs).flatMap((j) => j.steps);

  it("runs on tags and shares no concurrency group between tags, never cancelling a run", () => {
    // PyYAML reads YAML 1.1, where the key `on` is the boolean true.
    expect((workflow.on ?? workflow["true" as "on"]).push.tags).toEqual(["v*"]);
    const settings = [workflow.concurrency, ...Object.values(workflow.jobs).map((j) => j.concurrency)].filter((c) => c !== undefined);
    expect(settings.map(sharedGroup).filter(Boolean)).toEqual([]);
    for (const c of settings) expect((c as { "cancel-in-progress"?: boolean })["cancel-in-progress"]).not.toBe(true);
  });

  it("gives every release a build number that ranks where its version does, backports and prereleases included", () => {
    const step = steps.find((s) => s.id === "build-number")!;
    expect(step, "a step with id build-number").toBeDefined();
    // Pushed in this order: a backport (1.0.1, 1.1.1) after newer releases, prereleases before their release.
    const tags = ["v1.0.0", "v1.1.0", "v1.0.1", "v2.0.0-alpha.1", "v2.0.0-beta.1", "v2.0.0-beta.2", "v2.0.0-rc.1", "v1.1.1", "v2.0.0", "v2.0.1", "v2.10.0", "v10.0.0"];
    const runs = runStep(step, tags);
    const entries: BuildOrderEntry[] = tags.map((tag, i) => {
      const res = runs[i]!;
      expect(res.code, `${tag}: ${res.stdout}`).toBe(0);
      expect(res.outputs.build, tag).toMatch(/^[1-9]\d{0,14}$/);
      return { version: tag.slice(1), build: res.outputs.build!, channel: tag.includes("-") ? "beta" : "stable" };
    });
    expect(buildOrderViolations(entries).map(describeViolation)).toEqual([]);
    expect(new Set(entries.map((e) => e.build)).size).toBe(tags.length);
  });

  it("ranks a table of tags in semver order at the edges of each range (N 0 and 29, MINOR and PATCH 999, no v)", () => {
    const step = steps.find((s) => s.id === "build-number")!;
    const tags = ["v0.0.1", "v0.0.999", "v0.1.0", "v0.999.999", "1.0.0-alpha.0", "v1.0.0-alpha.29", "v1.0.0-beta.0", "v1.0.0-beta.29", "v1.0.0-rc.0", "v1.0.0-rc.9", "v1.0.0-rc.10", "v1.0.0-rc.29", "v1.0.0", "v1.0.1", "v9999999.999.999"];
    const runs = runStep(step, tags);
    const builds = runs.map((r, i) => {
      expect(r.code, `${tags[i]}: ${r.stdout}`).toBe(0);
      return BigInt(r.outputs.build!);
    });
    for (let i = 1; i < builds.length; i++) expect(builds[i]! > builds[i - 1]!, `${tags[i - 1]} < ${tags[i]}`).toBe(true);
    expect(String(builds.at(-1))).toMatch(/^\d{1,15}$/);
  });

  it("stops on a tag its build number cannot rank, naming the tag", () => {
    const step = steps.find((s) => s.id === "build-number")!;
    // Each of these once passed (colliding with another tag, misranking, or a bash error that carried on) or must stay refused.
    const tags = [
      "v2.0.0-preview.1", "v2.0.0-beta.30", "v1.1000.0", "v1.2", "v1.2.3-rc.1.2", "v1.2.3-x-alpha.5", "v1.2.08", "v01.2.3",
      "v1.2.3-rc.01", "v1.2.3-rc.100", "v1.2.3+build.5", "v1.2.3-RC.1", "v1.2.3-rc", "v1.2.3 ", "v1.2.3.4", "v12345678.0.0", "",
    ];
    const runs = runStep(step, tags);
    for (const [i, tag] of tags.entries()) {
      const res = runs[i]!;
      expect(res.code, tag).not.toBe(0);
      expect(res.stdout, tag).toContain(`::error::`);
    }
  });
});

describe(TEMPLATE, () => {
  const workflow = readYaml(TEMPLATE);
  const steps = workflow.jobs.release!.steps;
  const index = (pred: (s: Step) => boolean) => steps.findIndex(pred);

  it("passes the build number to the build as CURRENT_PROJECT_VERSION (CFBundleVersion) next to MARKETING_VERSION", () => {
    const build = steps.find((s) => s.name === "Build")!;
    expect(build.env?.BUILD_NUMBER).toBe("${{ steps.build-number.outputs.build }}");
    expect(build.run).toMatch(/MARKETING_VERSION="\$\{TAG#v\}" CURRENT_PROJECT_VERSION="\$BUILD_NUMBER"/);
    expect(index((s) => s.id === "build-number")).toBeLessThan(index((s) => s === build));
  });

  it("signs and notarizes the bundle before the disk image is made, and the disk image before relcast sees it", () => {
    const signApp = index((s) => s.name === "Sign and notarize the bundle");
    const dmg = index((s) => s.name === "Disk image");
    const signDmg = index((s) => s.name === "Sign and notarize the disk image");
    const preflight = index((s) => s.name === "Preflight");
    expect([signApp, dmg, signDmg].every((i) => i >= 0)).toBe(true);
    expect(signApp < dmg && dmg < signDmg && signDmg < preflight).toBe(true);
    for (const i of [signApp, signDmg]) {
      expect(steps[i]!.if).toBe("vars.MACOS_SIGNING_IDENTITY != ''");
      expect(steps[i]!.run).toMatch(/codesign --force (--options runtime )?--timestamp --sign "\$IDENTITY"/);
      expect(steps[i]!.run).toMatch(/xcrun notarytool submit .* --wait/);
      expect(steps[i]!.run).toMatch(/xcrun stapler staple/);
    }
    expect(steps[signApp]!.env).toMatchObject({ CERTIFICATE_P12: "${{ secrets.MACOS_CERTIFICATE_P12 }}", NOTARY_API_KEY: "${{ secrets.NOTARY_API_KEY }}" });
  });

  it("attests the build provenance of the published disk image and update archive, with the permissions that needs", () => {
    const publish = steps.find((s) => s.id === "publish")!;
    expect(publish.uses).toMatch(/\/relcast@/);
    const attest = index((s) => /^actions\/attest-build-provenance@v\d+$/.test(s.uses ?? ""));
    expect(attest).toBeGreaterThan(steps.indexOf(publish));
    // The Action's checksums output lists both downloads (test/action/action-runner.test.ts checks its lines with sha256sum -c).
    expect(steps[attest]!.with).toEqual({ "subject-checksums": "${{ steps.publish.outputs.checksums }}" });
    expect(workflow.permissions).toMatchObject({ "id-token": "write", attestations: "write", contents: "read" });
    const action = JSON.parse(execFileSync("python3", ["-c", "import sys, json, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))", path.join(REPO_ROOT, "action.yml")], { encoding: "utf8" }));
    expect(action.outputs.checksums.description).toMatch(/disk image and the update archive/);
  });
});
