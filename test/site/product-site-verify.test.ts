import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { renderChangelogPage } from "../../src/site/changelog-page.js";
import { renderDownloadsPage } from "../../src/site/downloads-page.js";
import type { ReleaseRecord } from "../../src/domain/record-schema.js";
import { ICON_64, typicalIcns } from "../helpers/icns-bytes.js";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

const ICON = "icons/bridge-plugin-1.1.0-icon.png";
const IDENTITY = { pluginId: "bridge-plugin", displayName: "Bridge Plugin", publisher: "Example Tools", appUrl: "https://updates.example.com" };

describe("verify holds the product site to what the site step writes, icon included", () => {
  let ws: Workspace;
  const records = new Map<string, ReleaseRecord>();

  const verify = () => runCli(["verify", "--config", ws.configFile]);
  async function tampered(key: string, change: (bytes: Buffer) => Buffer): Promise<string> {
    const file = path.join(ws.storeDir, key);
    const before = await readFile(file);
    await writeFile(file, change(before));
    try {
      const res = await verify();
      expect(res.code, res.stdout).toBe(11);
      return res.stdout;
    } finally {
      await writeFile(file, before);
    }
  }

  beforeAll(async () => {
    ws = await makeWorkspace();
    for (const [version, build, icon, at] of [["1.0.0", 100, false, "2026-09-01T09:00:00.000Z"], ["1.1.0", 110, true, "2026-10-01T09:00:00.000Z"]] as const) {
      const p = await ws.plugin(version, build, icon ? { icon: { file: "AppIcon.icns", bytes: typicalIcns() } } : {});
      const res = await runCli(ws.publishArgs(p, version, ["--json", "--published-at", at]));
      expect(res.code, res.stderr).toBe(0);
      records.set(version, JSON.parse(res.stdout));
    }
  });

  it("the record carries the icon and the minimum macOS; the stored icon is the .icns's largest PNG; verify passes with no warning", async () => {
    const r = records.get("1.1.0")!;
    expect(r.icon).toMatchObject({ fileName: "bridge-plugin-1.1.0-icon.png", width: 256, height: 256 });
    expect(r.autoupdate?.minimumSystemVersion).toBe("12.0");
    expect(records.get("1.0.0")!.icon).toBeUndefined();
    const stored = await readFile(path.join(ws.storeDir, ICON));
    expect(stored.equals(await readFile(path.join(ws.storeDir, "releases/1.1.0/bridge-plugin-1.1.0-icon.png")))).toBe(true);
    expect(stored.length).toBe(r.icon!.sizeBytes);
    const res = await verify();
    expect(res.code, res.stdout).toBe(0);
    expect(res.stdout).not.toContain("warnings:");
  });

  it("when every stable release is withdrawn, the page says so (not that none was ever published)", () => {
    const all = [...records.values()].reverse();
    const yanked = all.map((r) => ({ ...r, yanked: true as const, yankedReason: "crashes on launch" }));
    const page = renderDownloadsPage(IDENTITY, { count: yanked.length, versions: yanked });
    expect(page).toContain("Every stable release was withdrawn");
    expect(page).not.toContain("has been published yet");
    expect(renderDownloadsPage(IDENTITY, { count: 0, versions: [] })).toContain("No stable release has been published yet.");
  });

  it("a changed icon, public or stored, fails verify (exit 11) naming it", async () => {
    expect(await tampered(ICON, () => ICON_64)).toMatch(new RegExp(`site: ${ICON} is ${ICON_64.length} bytes; the record of 1\\.1\\.0 says`));
    const flipped = (b: Buffer) => { const c = Buffer.from(b); c.writeUInt8(c.readUInt8(100) ^ 1, 100); return c; };
    expect(await tampered(ICON, flipped)).toMatch(new RegExp(`site: ${ICON} has SHA-256 .*; the record of 1\\.1\\.0 says`));
    expect(await tampered("releases/1.1.0/bridge-plugin-1.1.0-icon.png", flipped)).toMatch(/site: releases\/1\.1\.0\/bridge-plugin-1\.1\.0-icon\.png has SHA-256/);
  });

  it("a page whose Open Graph image, icon or download link was changed fails verify naming the link", async () => {
    const evil = "https://evil.example.net/icon.png";
    const og = await tampered("index.html", (b) => Buffer.from(b.toString().replace(`content="https://updates.example.com/${ICON}"`, `content="${evil}"`)));
    expect(og).toContain(`site: index.html links ${evil}, which the records do not name`);
    const img = await tampered("changelog.html", (b) => Buffer.from(b.toString().replace(`<img class="app-icon" src="${ICON}"`, `<img class="app-icon" src="${evil}"`)));
    expect(img).toContain(`site: changelog.html links ${evil}, which the records do not name`);
    const dmg = await tampered("index.html", (b) => Buffer.from(b.toString().replace('class="button" href="downloads/bridge-plugin-1.1.0.dmg"', 'class="button" href="https://evil.example.net/x.dmg"')));
    expect(dmg).toContain("site: index.html lacks the link downloads/bridge-plugin-1.1.0.dmg");
    expect((await verify()).code).toBe(0);
  });

  it("a missing public icon is a problem; site sync restores it, and site build exports it", async () => {
    await rm(path.join(ws.storeDir, "icons"), { recursive: true });
    const missing = await verify();
    expect(missing.code).toBe(11);
    expect(missing.stdout).toContain(`site: ${ICON} is missing, but the record of 1.1.0 names its icon`);
    const sync = await runCli(["site", "sync", "--config", ws.configFile]);
    expect(sync.code, sync.stderr).toBe(0);
    expect((await verify()).code).toBe(0);
    const out = path.join(ws.dir, "exported");
    const build = await runCli(["site", "build", "--out", out, "--config", ws.configFile]);
    expect(build.code, build.stderr).toBe(0);
    expect((await readFile(path.join(out, ICON))).equals(await readFile(path.join(ws.storeDir, ICON)))).toBe(true);
  });

  it("releases recorded by an older relcast (no minimum macOS, icon, zone or Markdown) still render: no requirement line, no icon, UTC dates", () => {
    const old = structuredClone(records.get("1.0.0")!) as Record<string, any>;
    for (const k of ["publishedAtIso", "publishedAtLocal", "publishedAtTimezone", "releaseNotesMarkdown", "icon"]) delete old[k];
    delete old.autoupdate.minimumSystemVersion;
    old.publishedAt = { _seconds: Date.parse("2026-03-01T02:00:00Z") / 1000, _nanoseconds: 0 };
    const catalog = { count: 1, versions: [old as ReleaseRecord] };
    for (const html of [renderDownloadsPage(IDENTITY, catalog), renderChangelogPage(IDENTITY, catalog)]) {
      expect(html).not.toContain("Requires macOS");
      expect(html).not.toContain("<img");
      expect(html).not.toContain("og:image");
      expect(html).toContain('<time datetime="2026-03-01T02:00:00.000Z">1 March 2026</time>');
      expect(html).toContain(`<li>${old.releaseNotesList[0]}</li>`);
    }
  });
});
