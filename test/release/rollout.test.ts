import { execFileSync } from "node:child_process";
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumPath, launchChromium } from "../helpers/chromium.js";
import { runCli, startCli } from "../helpers/run-cli.js";
import { startServe, type ServeProcess } from "../helpers/serve-process.js";
import { treeBytes } from "../helpers/st4r-tree-bytes.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../helpers/workspace.js";

type FeedItem = { version: string; pubDate: string; interval: string | null };

/**
 * Each item of each appcast given as Python's xml.etree and email.utils read it
 * (an independent parser): version and pubDate as an ISO instant in UTC. One
 * Python run for all the files.
 */
function appcastItemsOf(files: string[]): FeedItem[][] {
  const py = [
    "import sys, json, email.utils, xml.etree.ElementTree as E, datetime",
    "ns='{http://www.andymatuschak.org/xml-namespaces/sparkle}'",
    "feeds=[]",
    "for f in sys.argv[1:]:",
    "  out=[]",
    "  for i in E.parse(f).getroot().find('channel').findall('item'):",
    "    d=email.utils.parsedate_to_datetime(i.find('pubDate').text).astimezone(datetime.timezone.utc)",
    "    r=i.find(ns+'phasedRolloutInterval')",
    "    out.append({'version': i.find(ns+'shortVersionString').text, 'pubDate': d.strftime('%Y-%m-%dT%H:%M:%S.000Z'), 'interval': r.text if r is not None else None})",
    "  feeds.append(out)",
    "print(json.dumps(feeds))",
  ].join("\n");
  return JSON.parse(execFileSync("python3", ["-c", py, ...files]).toString());
}

function appcastItems(file: string): FeedItem[] {
  return appcastItemsOf([file])[0]!;
}

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const PUBLISHED = Date.parse("2026-10-01T09:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

describe("relcast rollout pause / resume / status", { timeout: 120_000 }, () => {
  let ws: Workspace;
  const canonical = () => path.join(ws.storeDir, "releases", "appcast.xml");
  const publicFeed = () => path.join(ws.storeDir, "api/v1/plugins/bridge-plugin/appcast.xml");
  const cli = (...args: string[]) => runCli([...args, "--config", ws.configFile]);
  const catalogEntry = async (v: string) => JSON.parse(await readFile(path.join(ws.storeDir, "releases", "catalog.json"), "utf8")).versions.find((r: any) => r.version === v);
  const status = async (at: number) => {
    const res = await cli("rollout", "status", "1.1.0", "--json", "--at", iso(at));
    expect(res.code, res.stderr).toBe(0);
    return JSON.parse(res.stdout).releases[0];
  };
  const verifyOk = async () => {
    const res = await cli("verify");
    expect(res.code, res.stdout + res.stderr).toBe(0);
  };

  beforeAll(async () => {
    ws = await makeWorkspace();
    for (const [version, build, at, extra] of [["1.0.0", 100, "2026-09-01T09:00:00.000Z", []], ["1.1.0", 110, iso(PUBLISHED), ["--phased-rollout-interval", "86400"]]] as const) {
      const p = await ws.plugin(version, build);
      const res = await runCli(ws.publishArgs(p, version, ["--published-at", at, ...extra]));
      expect(res.code, res.stderr).toBe(0);
    }
  });

  it("status before any pause: group i's turn is pubDate + i × interval, 7 groups", async () => {
    const s = await status(PUBLISHED + 2 * DAY + 3 * HOUR);
    expect(s.state).toBe("running");
    expect(s.groups.map((g: any) => g.turn)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => iso(PUBLISHED + i * DAY)));
    expect(s.groups.map((g: any) => g.reached)).toEqual([true, true, true, false, false, false, false]);
  });

  const pausedAt = PUBLISHED + 2 * DAY + 3 * HOUR; // groups 0-2 reached; group 3 was 21 h away
  const resumedAt = pausedAt + 2 * DAY + 5 * HOUR;

  it("pause after two groups' worth of interval takes 1.1.0 out of both appcasts and latest at once", async () => {
    const res = await cli("rollout", "pause", "1.1.0", "--at", iso(pausedAt));
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain("paused the rollout of 1.1.0");
    for (const items of appcastItemsOf([canonical(), publicFeed()])) expect(items.map((i) => i.version)).toEqual(["1.0.0"]);
    expect((await readdir(path.join(ws.storeDir, "releases", "latest"))).sort()).toEqual(["bridge-plugin-1.0.0.dmg", "bridge-plugin-1.0.0.zip"]);
    expect(JSON.parse(await readFile(path.join(ws.storeDir, "downloads/bridge-plugin-latest.json"), "utf8")).version).toBe("1.0.0");
    expect((await catalogEntry("1.1.0")).rollout).toEqual({ paused: true, pauses: [{ pausedAt: iso(pausedAt) }] });
    expect(JSON.parse(await readFile(path.join(ws.storeDir, "releases/1.1.0/rollout.json"), "utf8"))).toEqual({ paused: true, pauses: [{ pausedAt: iso(pausedAt) }] });
    expect(await readFile(path.join(ws.storeDir, "index.html"), "utf8")).toMatch(/Version 1\.1\.0 <span class="badge rollout-paused">Rollout paused<\/span>/);
    await verifyOk();
  });

  it("a second pause changes nothing and says so (exit 0)", async () => {
    const before = await snapshotTree(ws.storeDir);
    const res = await cli("rollout", "pause", "1.1.0", "--at", iso(pausedAt + HOUR));
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain("already paused");
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });

  it("refuses pause and resume times outside the release's life, and a resume before the pause says how to get unstuck; nothing written", async () => {
    const before = await snapshotTree(ws.storeDir);
    // Three refusals that write nothing (checked below), independent of each other: run at once.
    const [early, future, beforePause] = await Promise.all([
      cli("rollout", "resume", "1.1.0", "--at", "2020-01-01T00:00:00Z"),
      cli("rollout", "resume", "1.1.0", "--at", "2033-01-01T00:00:00Z"),
      cli("rollout", "resume", "1.1.0", "--at", iso(pausedAt - HOUR)),
    ]);
    expect(early.code).toBe(2);
    expect(early.stderr).toContain(`the resume time 2020-01-01T00:00:00.000Z is before 1.1.0 was published (${iso(PUBLISHED)})`);
    expect(future.code).toBe(2);
    expect(future.stderr).toMatch(/the resume time 2033-01-01T00:00:00\.000Z is in the future \(more than 5 minutes after this machine's clock/);
    expect(beforePause.code).toBe(2);
    expect(beforePause.stderr).toContain(`is before the rollout's pause at ${iso(pausedAt)}`);
    expect(beforePause.stderr).toContain(`pass --at ${iso(pausedAt)} to close the pause now without moving the pubDate`);
    expect(beforePause.stderr).not.toContain("leave out --at");
    expect(await snapshotTree(ws.storeDir)).toEqual(before);

    // A rollout state that pauses before the release was published (by hand, or by an older relcast): rebuild refuses it.
    const markerFile = path.join(ws.storeDir, "releases/1.1.0/rollout.json");
    const marker = await readFile(markerFile, "utf8");
    await writeFile(markerFile, JSON.stringify({ paused: true, pauses: [{ pausedAt: iso(PUBLISHED - DAY) }] }) + "\n");
    const tampered = await snapshotTree(ws.storeDir);
    const rebuild = await cli("rebuild");
    expect(rebuild.code).not.toBe(0);
    expect(rebuild.stderr).toContain(`pausedAt ${iso(PUBLISHED - DAY)} is before the release was published (${iso(PUBLISHED)})`);
    expect(await snapshotTree(ws.storeDir)).toEqual(tampered);
    await writeFile(markerFile, marker);
  });

  it("verify names a paused release put back in the appcast, with the repair", async () => {
    const before = await treeBytes(ws.storeDir);
    const feed = await readFile(canonical(), "utf8");
    const pub = await readFile(publicFeed(), "utf8");
    const item = `<item>\n      <title>Version 1.1.0</title>`;
    // The appcast as it was before the pause, by hand: 1.0.0's item with 1.1.0's values is enough to be "offered".
    const tampered = feed.replace(/<item>[\s\S]*?<\/item>/, (m) => `${m.replace("<title>Version 1.0.0</title>", "<title>Version 1.1.0</title>").replace(/<sparkle:shortVersionString>1\.0\.0/, "<sparkle:shortVersionString>1.1.0").replace(/<sparkle:version>100/, "<sparkle:version>110")}\n    ${m}`);
    expect(tampered).toContain(item.split("\n")[1]!.trim());
    await writeFile(canonical(), tampered);
    const res = await cli("verify");
    expect(res.code).toBe(11);
    expect(res.stdout).toMatch(/1\.1\.0: the appcast offers 1\.1\.0 but its rollout is paused .*relcast rebuild/);
    await writeFile(canonical(), feed);
    await writeFile(publicFeed(), pub);
    // Byte for byte the store the pause test's verify accepted: another verify would repeat that one.
    expect(await treeBytes(ws.storeDir), "the store is put back").toEqual(before);
  });

  it("status while paused: groups reached before the pause, the rest as a resume now would place them", async () => {
    const s = await status(resumedAt);
    expect(s.state).toBe("paused");
    expect(s.pubDate).toBeNull();
    expect(s.groups.map((g: any) => g.reached)).toEqual([true, true, true, false, false, false, false]);
    expect(s.groups[3].turn).toBe(iso(resumedAt + 21 * HOUR));
  });

  it("resume puts it back with pubDate = original + time paused: the next group's turn follows without a gap", async () => {
    const res = await cli("rollout", "resume", "1.1.0", "--at", iso(resumedAt));
    expect(res.code, res.stderr).toBe(0);
    const shifted = PUBLISHED + (resumedAt - pausedAt);
    for (const items of appcastItemsOf([canonical(), publicFeed()])) {
      expect(items.map((i) => i.version)).toEqual(["1.1.0", "1.0.0"]);
      expect(items[0]).toEqual({ version: "1.1.0", pubDate: iso(shifted), interval: "86400" });
    }
    const s = await status(resumedAt);
    expect(s.state).toBe("running");
    expect(s.pausedSeconds).toBe((resumedAt - pausedAt) / 1000);
    // At the pause group 3 was 21 h away; at the resume it still is, and groups 0-2 stay reached (none restarted).
    expect(s.groups.map((g: any) => g.reached)).toEqual([true, true, true, false, false, false, false]);
    expect(s.groups[3].turn).toBe(iso(resumedAt + 21 * HOUR));
    expect(s.groups.map((g: any) => g.turn)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => iso(shifted + i * DAY)));
    expect((await readdir(path.join(ws.storeDir, "releases", "latest"))).sort()).toEqual(["bridge-plugin-1.1.0.dmg", "bridge-plugin-1.1.0.zip"]);
    const again = await cli("rollout", "resume", "1.1.0", "--at", iso(resumedAt + HOUR));
    expect(again.code).toBe(0);
    expect(again.stderr).toContain("is not paused; nothing changed");
    await verifyOk();
  });

  it("a second pause is summed with the first", async () => {
    const p2 = resumedAt + 10 * HOUR;
    const r2 = p2 + 6 * HOUR + 30 * 60_000;
    expect((await cli("rollout", "pause", "1.1.0", "--at", iso(p2))).code).toBe(0);
    expect((await cli("rollout", "resume", "1.1.0", "--at", iso(r2))).code).toBe(0);
    const shifted = PUBLISHED + (resumedAt - pausedAt) + (r2 - p2);
    expect(appcastItems(publicFeed())[0]).toEqual({ version: "1.1.0", pubDate: iso(shifted), interval: "86400" });
    const s = await status(r2);
    expect(s.pauses).toHaveLength(2);
    expect(s.groups[3].turn).toBe(iso(shifted + 3 * DAY));
    // Time the rollout ran: 2d3h before the first pause, 10h between: group 3 (3 days) is 11 h away.
    expect(s.groups[3].turn).toBe(iso(r2 + 11 * HOUR));
    await verifyOk();
  });

  it("verify catches a tampered pubDate and a tampered rollout state, each with its repair", async () => {
    const before = await treeBytes(ws.storeDir);
    const feed = await readFile(canonical(), "utf8");
    const original = appcastItems(canonical())[0]!.pubDate;
    const markerFile = path.join(ws.storeDir, "releases/1.1.0/rollout.json");
    const marker = await readFile(markerFile, "utf8");
    // Two independent faults (the appcast's pubDate, the rollout state's pause count), found by one verify.
    await writeFile(canonical(), feed.replace(/<pubDate>[^<]*<\/pubDate>/, "<pubDate>Thu, 01 Oct 2026 09:00:00 +0000</pubDate>"));
    const state = JSON.parse(marker);
    state.pauses.pop();
    await writeFile(markerFile, JSON.stringify(state, null, 2) + "\n");
    let res = await cli("verify");
    expect(res.code).toBe(11);
    expect(res.stdout, "a tampered pubDate").toMatch(/1\.1\.0: appcast pubDate is "Thu, 01 Oct 2026 09:00:00 \+0000" but the catalog says ".*" \(the original pubDate plus \d+ s paused\): run `relcast rebuild`/);
    expect(res.stdout, "a tampered rollout state").toMatch(/rollout state releases\/1\.1\.0\/rollout\.json \(running, 1 pause\(s\)\) disagrees with the catalog \(running, 2 pause\(s\)\)/);
    await writeFile(canonical(), feed);
    expect(appcastItems(canonical())[0]!.pubDate).toBe(original);

    await writeFile(markerFile, '{"paused": false, "pauses": []}\n');
    res = await cli("verify");
    expect(res.code).toBe(11);
    expect(res.stdout).toContain("rollout state releases/1.1.0/rollout.json is not valid");
    await writeFile(markerFile, marker);
    // Byte for byte the store the second-pause test's verify accepted: another verify would repeat that one.
    expect(await treeBytes(ws.storeDir), "the store is put back").toEqual(before);
  });

  it("refuses a release without a phased rollout, and an unknown one, writing nothing", async () => {
    const before = await snapshotTree(ws.storeDir);
    // Three refusals that write nothing (checked below), independent of each other: run at once.
    const [none, unknown, badAt] = await Promise.all([
      cli("rollout", "pause", "1.0.0"),
      cli("rollout", "resume", "9.9.9"),
      cli("rollout", "pause", "1.1.0", "--at", "yesterday"),
    ]);
    expect(none.code).toBe(8);
    expect(none.stderr).toContain("version 1.0.0 has no phased rollout");
    expect(none.stderr).toContain("relcast yank 1.0.0");
    expect(unknown.code).toBe(5);
    expect(badAt.code).toBe(2);
    for (const r of [none, unknown, badAt]) expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  });

  it("a paused release can be yanked; unyanked it stays paused until resumed", async () => {
    const at = Date.parse("2026-10-09T00:00:00.000Z");
    expect((await cli("rollout", "pause", "1.1.0", "--at", iso(at))).code).toBe(0);
    const yank = await cli("yank", "1.1.0", "--reason", "bad build");
    expect(yank.code, yank.stderr).toBe(0);
    expect((await cli("unyank", "1.1.0")).code).toBe(0);
    expect(appcastItems(canonical()).map((i) => i.version)).toEqual(["1.0.0"]);
    expect((await catalogEntry("1.1.0")).rollout.paused).toBe(true);
    await verifyOk();
    const rebuilt = await cli("rebuild");
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect((await catalogEntry("1.1.0")).rollout.paused).toBe(true);
    expect(appcastItems(publicFeed()).map((i) => i.version)).toEqual(["1.0.0"]);
    await verifyOk();
  });

  it("a resume, a yank and a publish at the same moment all land: each write goes through the feeds' compare-and-swap", async () => {
    const p = await ws.plugin("1.0.1", 101);
    const runs = [
      startCli([...ws.publishArgs(p, "1.0.1", ["--published-at", "2026-10-10T00:00:00.000Z"])]),
      startCli(["yank", "1.0.0", "--config", ws.configFile]),
      startCli(["rollout", "resume", "1.1.0", "--at", "2026-10-10T00:00:00Z", "--config", ws.configFile]),
    ];
    for (const r of await Promise.all(runs.map((x) => x.done))) expect(r.code, r.stderr).toBe(0);
    expect(appcastItems(publicFeed()).map((i) => i.version)).toEqual(["1.0.1", "1.1.0"]);
    expect((await catalogEntry("1.0.0")).yanked).toBe(true);
    expect((await catalogEntry("1.1.0")).rollout.paused).toBe(false);
    await verifyOk();
    expect((await cli("rollout", "pause", "1.1.0", "--at", "2026-10-11T00:00:00Z")).code).toBe(0);
    expect(appcastItems(publicFeed()).map((i) => i.version)).toEqual(["1.0.1"]);
    expect((await readdir(path.join(ws.storeDir, "releases", "latest"))).sort()).toEqual(["bridge-plugin-1.0.1.dmg", "bridge-plugin-1.0.1.zip"]);
  });

  describe.skipIf(!chromiumPath().path)("the downloads page in headless Chromium", () => {
    let browser: Browser;
    let server: ServeProcess;
    beforeAll(async () => {
      server = await startServe(["--config", ws.configFile]);
      browser = await launchChromium(chromiumPath().path!);
    });
    afterAll(async () => {
      await browser?.close();
      await server?.stop();
    });

    it("shows the paused release as such, and not as latest", async () => {
      const page = await browser.newPage();
      expect((await page.goto(`${server.base}/`))?.status()).toBe(200);
      expect(await page.locator("#latest h2").innerText()).toBe("Version 1.0.1");
      const entry = page.locator("li.version", { has: page.locator("h3", { hasText: "Version 1.1.0" }) });
      // textContent: the badge is shown in capitals by the stylesheet.
      expect((await entry.locator("h3").textContent())!.replace(/\s+/g, " ").trim()).toBe("Version 1.1.0 Rollout paused");
      expect(await entry.locator(".rollout-paused").isVisible()).toBe(true);
      const note = entry.locator("p.rollout");
      expect(await note.textContent()).toContain("Rollout paused since");
      expect(await note.locator("time").getAttribute("datetime")).toBe("2026-10-11T00:00:00.000Z");
      await page.close();
    });
  });
});
