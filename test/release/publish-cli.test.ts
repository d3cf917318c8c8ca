import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../helpers/workspace.js";

const PY_VERIFY = `
import base64, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
pub = Ed25519PublicKey.from_public_bytes(base64.b64decode(sys.argv[1]))
pub.verify(base64.b64decode(sys.argv[2]), open(sys.argv[3], "rb").read())
print("ok")
`;

const PY_APPCAST = `
import sys, xml.etree.ElementTree as ET
ns = {"sparkle": "http://www.andymatuschak.org/xml-namespaces/sparkle"}
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "rss" and root.get("version") == "2.0"
for item in root.find("channel").findall("item"):
    enc = item.find("enclosure")
    print(item.find("sparkle:shortVersionString", ns).text, item.find("sparkle:version", ns).text,
          enc.get("length"), enc.get("{http://www.andymatuschak.org/xml-namespaces/sparkle}edSignature"),
          enc.get("url"), item.find("pubDate").text)
`;

// The first four tests only read the store the three publishes left (they run at the same time); the
// last three publish into it, in order.
describe.concurrent("relcast publish on a folder store", () => {
  let ws: Workspace;
  const releases = releasesDir;
  beforeAll(async () => {
    ws = await makeWorkspace();
    for (const [version, build, at] of [["1.0.0", 100, "2026-01-01T10:00:00.123Z"], ["1.1.0", 110, "2026-02-01T10:00:00.000Z"], ["1.2.0", 120, "2026-03-01T10:00:00.000Z"]] as const) {
      const p = await ws.plugin(version, build);
      const res = await runCli(ws.publishArgs(p, version, ["--published-at", at]));
      expect(res.stderr).not.toContain(ws.key.seedBase64);
      expect(res.code, res.stderr).toBe(0);
    }
  });

  function releasesDir(...parts: string[]): string {
    return path.join(ws.storeDir, "releases", ...parts);
  }

  it("writes a §2.5 catalog, newest first, with every §2.6 field", async () => {
    const catalog = JSON.parse(await readFile(releases("catalog.json"), "utf8"));
    expect(catalog.pluginId).toBe("bridge-plugin");
    expect(catalog.count).toBe(3);
    expect(catalog.versions.map((v: { version: string }) => v.version)).toEqual(["1.2.0", "1.1.0", "1.0.0"]);
    const oldest = catalog.versions[2];
    expect(oldest).toMatchObject({
      pluginId: "bridge-plugin", displayName: "Bridge Plugin", publisher: "Example Tools", version: "1.0.0", semver: "1.0.0",
      channel: "stable", artifactType: "dmg", summary: "Bridge 1.0.0 starts faster",
      releaseNotes: "- Bridge 1.0.0 starts faster\n- Fixed reconnect after sleep\n- Chat history keeps 50 turns",
      releaseNotesList: ["Bridge 1.0.0 starts faster", "Fixed reconnect after sleep", "Chat history keeps 50 turns"],
      sizeBytes: 256 * 1024,
      downloadUrl: `file://${ws.storeDir}/releases/1.0.0/bridge-plugin-1.0.0.dmg`,
      publicDownloadUrl: "https://updates.example.com/downloads/bridge-plugin-1.0.0.dmg",
      publicLatestDownloadUrl: "https://updates.example.com/downloads/bridge-plugin-1.0.0.dmg",
      appcastUrl: `file://${ws.storeDir}/releases/appcast.xml`,
      publicAppcastUrl: "https://updates.example.com/api/v1/plugins/bridge-plugin/appcast.xml",
      objectStore: { bucket: ws.storeDir, objectPath: "releases/1.0.0/bridge-plugin-1.0.0.dmg", artifactFileName: "bridge-plugin-1.0.0.dmg", latestObjectPath: "releases/latest/bridge-plugin-1.0.0.dmg" },
      publishedAt: { _seconds: 1767261600, _nanoseconds: 123000000 },
      publishedAtIso: "2026-01-01T10:00:00.123Z",
      publishedAtLocal: "Thursday, January 1, 2026 at 5:00:00 AM EST",
      publishedAtTimezone: "America/New_York",
      updatedAt: { _seconds: 1767261600, _nanoseconds: 123000000 },
    });
    expect(oldest.autoupdate).toMatchObject({ publicDownloadUrl: "https://updates.example.com/downloads/bridge-plugin-1.0.0.zip", buildNumber: 100 });
    const dmg = await readFile(releases("1.0.0", "bridge-plugin-1.0.0.dmg"));
    expect(dmg.length).toBe(oldest.sizeBytes);
    const record = JSON.parse(await readFile(releases("1.0.0", "release.json"), "utf8"));
    expect(record).toEqual(oldest);
  });

  it("zips the bundle with symlinks and executable bits, and unzip -t passes", async () => {
    const zip = releases("1.2.0", "bridge-plugin-1.2.0.zip");
    expect(execFileSync("unzip", ["-t", zip]).toString()).toContain("No errors detected");
    const listing = execFileSync("zipinfo", [zip]).toString();
    expect(listing).toMatch(/^lrwx.* BridgePlugin\.bundle\/Contents\/Frameworks\/Bridge\.framework\/Versions\/Current$/m);
    expect(listing).toMatch(/^-rwxr-xr-x.* BridgePlugin\.bundle\/Contents\/MacOS\/BridgePlugin$/m);
    expect(listing).toMatch(/^-rw-r--r--.* BridgePlugin\.bundle\/Contents\/Info\.plist$/m);
    const names = execFileSync("zipinfo", ["-1", zip]).toString().trim().split("\n");
    expect(names.every((n) => n.startsWith("BridgePlugin.bundle/"))).toBe(true);
  });

  it("signs the exact zip bytes: Python cryptography verifies edSignature", async () => {
    const catalog = JSON.parse(await readFile(releases("catalog.json"), "utf8"));
    for (const v of catalog.versions) {
      const zip = releases(v.version, `bridge-plugin-${v.version}.zip`);
      const out = execFileSync("python3", ["-c", PY_VERIFY, ws.key.publicKeyBase64, v.autoupdate.edSignature, zip]).toString();
      expect(out.trim()).toBe("ok");
      expect(Buffer.from(v.autoupdate.edSignature, "base64")).toHaveLength(64);
    }
  });

  it("writes an RSS 2.0 appcast that Python's xml.etree reads, one item per release", async () => {
    const out = execFileSync("python3", ["-c", PY_APPCAST, releases("appcast.xml")]).toString().trim().split("\n");
    const catalog = JSON.parse(await readFile(releases("catalog.json"), "utf8"));
    expect(out).toHaveLength(3);
    out.forEach((line, i) => {
      const [short, build, length, sig, url, ...date] = line.split(" ");
      const v = catalog.versions[i];
      expect([short, Number(build), Number(length), sig, url]).toEqual([v.version, v.autoupdate.buildNumber, v.autoupdate.sizeBytes, v.autoupdate.edSignature, v.autoupdate.publicDownloadUrl]);
      expect(date.join(" ")).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000$/);
    });
  });

  it.sequential("keeps the highest stable version in latest/ when a backport is published later", async () => {
    const p = await ws.plugin("1.1.1", 111);
    const res = await runCli(ws.publishArgs(p, "1.1.1"));
    expect(res.code, res.stderr).toBe(0);
    const latest = Object.keys(await snapshotTree(releases("latest"))).sort();
    expect(latest).toEqual(["bridge-plugin-1.2.0.dmg", "bridge-plugin-1.2.0.zip"]);
    const catalog = JSON.parse(await readFile(releases("catalog.json"), "utf8"));
    expect(catalog.count).toBe(4);
    expect(catalog.versions[0].version).toBe("1.1.1");
  });

  it.sequential("treats an identical re-run as a no-op and refuses the same version with other bytes", async () => {
    const p = await ws.plugin("1.2.0", 120);
    const before = await snapshotTree(ws.storeDir);
    const again = await runCli(ws.publishArgs(p, "1.2.0"));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("already published");
    expect(await snapshotTree(ws.storeDir)).toEqual(before);

    await writeFile(p.dmg, "different bytes");
    const clash = await runCli(ws.publishArgs(p, "1.2.0"));
    expect(clash.code).toBe(8);
    expect(clash.stderr).toMatch(/already published with a different disk image/);
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });

  it.sequential("--dry-run prints the plan and writes nothing; --json prints the record on stdout", async () => {
    const p = await ws.plugin("1.3.0", 130);
    const before = await snapshotTree(ws.storeDir);
    const dry = await runCli(ws.publishArgs(p, "1.3.0", ["--dry-run", "--json"]));
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toMatch(/create\s+releases\/1\.3\.0\/bridge-plugin-1\.3\.0\.dmg\s+262144 B\s+application\/x-apple-diskimage\s+\[public, max-age=31536000, immutable\]/);
    expect(dry.stderr).toMatch(/update-cas\s+releases\/appcast\.xml/);
    expect(JSON.parse(dry.stdout).record.version).toBe("1.3.0");
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
    const real = await runCli(ws.publishArgs(p, "1.3.0", ["--json", "--quiet"]));
    expect(real.code, real.stderr).toBe(0);
    expect(JSON.parse(real.stdout)).toMatchObject({ version: "1.3.0", autoupdate: { buildNumber: 130 } });
  });
});
