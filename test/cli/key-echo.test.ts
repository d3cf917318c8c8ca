import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, newKey, type Workspace } from "../helpers/workspace.js";

/** Every encoding a key could show up in: base64, base64url, hex, and the 96-byte legacy form. */
function encodings(seed: Buffer, pub: Buffer): string[] {
  return [seed.toString("base64"), seed.toString("base64url"), seed.toString("hex"), Buffer.concat([seed, pub]).toString("base64")];
}

describe("a key given where a path or text belongs is never echoed (item 6)", () => {
  let ws: Workspace;
  let file: string;
  beforeAll(async () => {
    ws = await makeWorkspace();
    file = path.join(ws.dir, "payload.bin");
    await writeFile(file, "payload");
  });
  afterAll(async () => {
    await rm(ws.dir, { recursive: true, force: true });
  });

  const forms = ["base64 seed", "hex seed"] as const;
  it.each(forms)("publish/keys/sign --key-file <%s>: E_KEY says it looks like a key, shows no form of it", async (form) => {
    const key = newKey();
    const value = form === "hex seed" ? key.seed.toString("hex") : key.seedBase64;
    const p = await ws.plugin("1.0.0", 100);
    const runs = [
      await runCli([...ws.publishArgs(p, "1.0.0").filter((a, i, all) => a !== "--key-file" && all[i - 1] !== "--key-file"), "--key-file", value]),
      await runCli(["--debug", "keys", "public", "--key-file", value]),
      await runCli(["sign", "--key-file", value, file]),
      await runCli(["sign", `--ed-key-file=${value}`, file]),
    ];
    for (const res of runs) {
      expect(res.code, res.stderr).toBe(6);
      expect(res.stderr).toMatch(/relcast: error \[E_KEY\]: the --key-file value looks like a key itself, not the path of a key file \(the value is not shown\)/);
      expect(res.stderr).toMatch(/fix: write the key to a file and pass its path/);
      for (const e of encodings(key.seed, key.publicKey)) expect(res.stdout + res.stderr).not.toContain(e);
    }
  });

  it("a key pasted into any other flag is masked in every message, commander's included", async () => {
    const key = newKey();
    const runs = [
      await runCli(["--debug", "publish", "--version", key.seedBase64, "--app", "x", "--dmg", "y", "--notes", "z"]),
      await runCli(["verify", "--store", `file://${key.seedBase64}`, "--config", key.seedBase64]),
      await runCli(["publish", "--version", "1.0.0", "--app", key.seedBase64]),
      await runCli(["gc", "--older-than", key.seed.toString("hex")]),
    ];
    for (const res of runs) {
      expect(res.code).not.toBe(0);
      expect(res.code).not.toBe(70);
      for (const e of encodings(key.seed, key.publicKey)) expect(res.stdout + res.stderr).not.toContain(e);
    }
    // A random base64 key may hold a "+", which the version check reports as build metadata: masked either way.
    expect(runs[0]!.stderr).toMatch(/version "\*\*\*" (is not a semantic version|carries build metadata)/);
  });

  it("--public-key values stay visible (a public key is not a secret)", async () => {
    const key = newKey();
    const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-pub-"));
    try {
      const res = await runCli(["sign", "--verify", "--public-key", key.publicKeyBase64, file, Buffer.alloc(64, 1).toString("base64")]);
      expect(res.code).toBe(1);
      expect(res.stdout + res.stderr).not.toContain("***");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
