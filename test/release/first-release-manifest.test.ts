import { execFileSync } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

// Python's zipfile and hashlib: the SHA-1 of every regular file in the zip, by its path below the bundle folder.
const PY_SHA1 = `
import hashlib, json, stat, sys, zipfile
out = {}
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        mode = info.external_attr >> 16
        if info.is_dir() or stat.S_ISLNK(mode): continue
        out["/" + info.filename.split("/", 1)[1]] = hashlib.sha1(z.read(info)).hexdigest()
print(json.dumps(out))
`;

/**
 * A store's first release has nothing to make a delta from, but it stores
 * its tree manifest (from the hashes the zip step took while zipping), so
 * the second release's delta reads only the files that changed.
 */
describe("the first release of a store with deltas on", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await makeWorkspace({ deltas: { maximum: 5 } });
  });
  afterAll(async () => {
    await rm(ws.dir, { recursive: true, force: true });
  });

  it("stores releases/1.0.0/tree.json pinned to its zip, with the SHA-1 Python computes for every file; the next delta is made from it", async () => {
    const p1 = await ws.plugin("1.0.0", 100);
    const first = await runCli(ws.publishArgs(p1, "1.0.0"));
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain("no older release to make a delta from");
    const dir = path.join(ws.storeDir, "releases", "1.0.0");
    const record = JSON.parse(await readFile(path.join(dir, "release.json"), "utf8"));
    const manifest = JSON.parse(await readFile(path.join(dir, "tree.json"), "utf8")) as {
      version: string; zip: { sha256: string; sizeBytes: number }; entries: Array<{ path: string; kind: string; sha1?: string }>;
    };
    expect(manifest.version).toBe("1.0.0");
    expect(manifest.zip).toEqual({ sha256: record.autoupdate.sha256, sizeBytes: record.autoupdate.sizeBytes });
    const python = JSON.parse(execFileSync("python3", ["-c", PY_SHA1, path.join(dir, "bridge-plugin-1.0.0.zip")], { encoding: "utf8" })) as Record<string, string>;
    const files = Object.fromEntries(manifest.entries.filter((e) => e.kind === "file").map((e) => [e.path, e.sha1]));
    expect(files).toEqual(python);
    expect(Object.keys(files).length).toBeGreaterThan(3);

    const p2 = await ws.plugin("1.1.0", 110);
    const second = await runCli(ws.publishArgs(p2, "1.1.0"));
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/delta from 1\.0\.0 .*old tree from its manifest/);
    const verify = await runCli(["verify", "--config", ws.configFile, "--public-key", ws.key.publicKeyBase64]);
    expect(verify.code, verify.stderr + verify.stdout).toBe(0);
  });
});
