import { readFile, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace } from "../helpers/workspace.js";

describe("a store holds one plugin", () => {
  it("publishing another pluginId into it is refused up front, naming the plugin it holds, and nothing is written", async () => {
    const ws = await makeWorkspace();
    const p = await ws.plugin("1.0.0", 100);
    const first = await runCli(ws.publishArgs(p, "1.0.0"));
    expect(first.code, first.stderr).toBe(0);
    const catalog = await readFile(`${ws.storeDir}/releases/catalog.json`);
    const config = JSON.parse(await readFile(ws.configFile, "utf8"));
    await writeFile(ws.configFile, JSON.stringify({ ...config, pluginId: "other-plugin" }));
    const other = await ws.plugin("1.1.0", 110);
    const res = await runCli(ws.publishArgs(other, "1.1.0"));
    expect(res.code, res.stderr).toBe(3);
    expect(res.stderr).toContain('this store holds plugin "bridge-plugin"');
    expect(res.stderr).toContain('use another store or prefix for "other-plugin", or set pluginId to "bridge-plugin"');
    expect(res.stderr).not.toContain("repair the store");
    expect((await readFile(`${ws.storeDir}/releases/catalog.json`)).equals(catalog)).toBe(true);
  });
});
