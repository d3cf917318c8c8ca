import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace } from "../helpers/workspace.js";

describe("after the config's displayName changes", () => {
  it("verify's hint names `relcast rebuild`, and rebuild brings the appcast's channel and the pages up to date", async () => {
    const ws = await makeWorkspace();
    const p = await ws.plugin("1.0.0", 100);
    expect((await runCli(ws.publishArgs(p, "1.0.0"))).code).toBe(0);
    const config = JSON.parse(await readFile(ws.configFile, "utf8"));
    await writeFile(ws.configFile, JSON.stringify({ ...config, displayName: "Bridge Studio" }));
    const stale = await runCli(["verify", "--config", ws.configFile]);
    expect(stale.code, stale.stdout).toBe(11);
    expect(stale.stdout).toContain("`relcast rebuild`");
    const rebuilt = await runCli(["rebuild", "--config", ws.configFile]);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    const appcast = await readFile(path.join(ws.storeDir, "api/v1/plugins/bridge-plugin/appcast.xml"), "utf8");
    expect(appcast).toContain("<title>Bridge Studio updates</title>");
    expect(await readFile(path.join(ws.storeDir, "index.html"), "utf8")).toContain("<h1>Bridge Studio</h1>");
    const after = await runCli(["verify", "--config", ws.configFile]);
    expect(after.code, after.stdout).toBe(0);
  });
});
