import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
}

/** A port nothing listens on: bound, noted, closed. */
async function closedPort(): Promise<number> {
  const s = createServer();
  const port = await listen(s);
  await new Promise((r) => s.close(r));
  return port;
}

describe("relcast verify-install", () => {
  let ws: Workspace;
  const requests: string[] = [];
  let status = 200;
  let body = JSON.stringify({ ok: true, version: "1.2.0", model: "local" });
  let contentType = "application/json";
  const bridge = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(status, { "content-type": contentType }).end(body);
  });
  let port = 0;

  beforeAll(async () => {
    ws = await makeWorkspace({ assistantIntegration: ["Open BridgePlugin.dmg and drag the plugin to Plugins", "Start it from the menu bar"] });
    port = await listen(bridge);
  });
  afterAll(() => new Promise((r) => bridge.close(r)));

  it("reports the running bridge's answer to GET /v1/status, JSON pretty-printed", async () => {
    const r = await runCli(["verify-install", "--port", String(port), "--config", ws.configFile]);
    expect(r.code, r.stderr).toBe(0);
    expect(requests.at(-1)).toBe("GET /v1/status");
    expect(r.stdout).toContain(`http://127.0.0.1:${port}/v1/status answered HTTP 200 (application/json)`);
    expect(r.stdout).toContain('  "version": "1.2.0"');
  });

  it("says a bridge that answers an error status is running but unhealthy (exit 11)", async () => {
    status = 503;
    body = "warming up";
    try {
      const r = await runCli(["verify-install", "--port", String(port), "--config", ws.configFile]);
      expect(r.code).toBe(11);
      expect(r.stdout).toContain("answered HTTP 503");
      expect(r.stdout).toContain("warming up");
      expect(r.stderr).toContain("is running but answered HTTP 503");
    } finally {
      status = 200;
    }
  });

  it("prints the bridge's Content-Type and body escaped: no C1 control, no line that starts a workflow command", async () => {
    contentType = "text/plain\x9b31mRED\x85::error::x";
    body = "\n\u00a0::error::from-bridge\n##[warning]legacy";
    try {
      const r = await runCli(["verify-install", "--port", String(port), "--config", ws.configFile], { env: { GITHUB_ACTIONS: "true" } });
      expect(r.stdout).toContain("(text/plain\\x9b31mRED\\x85::error::x)");
      expect(r.stdout).not.toMatch(/[\x80-\x9f]/);
      expect(r.stdout).not.toMatch(/^\s*::/m);
      expect(r.stdout).not.toContain("##[");
    } finally {
      contentType = "application/json";
      body = JSON.stringify({ ok: true, version: "1.2.0", model: "local" });
    }
  });

  it("on a closed port says not running, exits 13 and prints the config's install instructions", async () => {
    const closed = await closedPort();
    const r = await runCli(["verify-install", "--port", String(closed), "--config", ws.configFile]);
    expect(r.code).toBe(13);
    expect(r.stderr).toContain(`nothing answered at http://127.0.0.1:${closed}/v1/status (ECONNREFUSED)`);
    expect(r.stderr).toContain("1. Open BridgePlugin.dmg and drag the plugin to Plugins");
    expect(r.stderr).toContain("2. Start it from the menu bar");
    expect(r.stderr).toMatch(/error \[E_NETWORK\]: the local bridge is not running/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("gives up on a bridge that accepts but never answers, within --timeout", async () => {
    const sockets: Socket[] = [];
    const silent = createServer();
    silent.on("connection", (s) => sockets.push(s));
    const silentPort = await listen(silent);
    try {
      // The bridge never answers and never closes: the CLI can only have exited through its own --timeout.
      const r = await runCli(["verify-install", "--port", String(silentPort), "--timeout", "300", "--config", ws.configFile]);
      expect(r.code).toBe(13);
      expect(r.stderr).toContain("no answer within 300 ms");
      expect(sockets.length).toBeGreaterThan(0);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it("works without a config (generic instructions) but refuses non-loopback hosts and bad ports", async () => {
    const closed = await closedPort();
    const empty = await mkdtemp(path.join(os.tmpdir(), "relcast-noconfig-"));
    const noConfig = await runCli(["verify-install", "--port", String(closed)], { cwd: empty });
    expect(noConfig.code).toBe(13);
    expect(noConfig.stderr).toContain("Install the plugin from its disk image");
    const remote = await runCli(["verify-install", "--host", "192.0.2.10"]);
    expect(remote.code).toBe(2);
    expect(remote.stderr).toContain("is not a loopback address");
    const badPort = await runCli(["verify-install", "--port", "70000"]);
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toContain("--port 70000 is not a whole number from 1 to 65535");
  });

  it("an explicit --config that is broken is a config error, not a silent default", async () => {
    const bad = path.join(ws.dir, "bad.json");
    await writeFile(bad, "{ not json");
    const r = await runCli(["verify-install", "--port", String(port), "--config", bad]);
    expect(r.code).toBe(3);
  });
});
