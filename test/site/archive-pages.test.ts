import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyTarget } from "../../src/apply/apply-write.js";
import { loadConfig } from "../../src/config/load-config.js";
import type { RelcastConfig } from "../../src/config/schema.js";
import { appcastLimit } from "../../src/domain/appcast.js";
import { buildCatalog, parseCatalog, serializeCatalog } from "../../src/domain/catalog.js";
import type { ReleaseRecord } from "../../src/domain/record-schema.js";
import { CATALOG_KEY } from "../../src/domain/release-layout.js";
import { applyChange } from "../../src/release/apply-change.js";
import { syncSite } from "../../src/site/site-sync.js";
import { planSite, storedFeeds } from "../../src/site/site-plan.js";
import { createFolderStore } from "../../src/store/folder-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { checkPublicFeeds } from "../../src/verify/public-feeds.js";
import { chromiumPath, launchChromium } from "../helpers/chromium.js";
import { startServe, type ServeProcess } from "../helpers/serve-process.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

const ID = "bridge-plugin";

/** A complete record; `i` orders versions, builds and dates (1.0.0 … 1.0.99, 1.1.0 …). Release 7's notes and summary are hostile. */
function record(i: number): ReleaseRecord {
  const version = `1.${Math.floor(i / 100)}.${i % 100}`;
  const url = (f: string) => `https://updates.example.com/downloads/${ID}-${version}.${f}`;
  const notes = i === 7 ? "<img src=x onerror=\"document.title='pwned'\"> fixed `<script>`" : `fixed bug ${i}`;
  return {
    pluginId: ID, displayName: "Bridge Plugin", publisher: "Example Tools", version, semver: version, channel: "stable", artifactType: "dmg",
    summary: i === 7 ? "<b>bold</b> & more" : `Release ${version}`, releaseNotes: `- ${notes}`, releaseNotesList: [notes], sizeBytes: 1000 + i,
    sha256: (i % 16).toString(16).repeat(64),
    downloadUrl: `file:///s/releases/${version}/${ID}-${version}.dmg`, publicDownloadUrl: url("dmg"), publicLatestDownloadUrl: url("dmg"),
    appcastUrl: "file:///s/releases/appcast.xml", publicAppcastUrl: `https://updates.example.com/api/v1/plugins/${ID}/appcast.xml`,
    objectStore: { bucket: "/s", objectPath: `releases/${version}/${ID}-${version}.dmg`, artifactFileName: `${ID}-${version}.dmg`, latestObjectPath: `releases/latest/${ID}-x.dmg` },
    autoupdate: { publicDownloadUrl: url("zip"), buildNumber: 100 + i, edSignature: "c2ln", sizeBytes: 10 },
    publishedAt: { _seconds: 1_700_000_000 + i * 86_400, _nanoseconds: 0 },
    updatedAt: { _seconds: 1_700_000_000 + i * 86_400, _nanoseconds: 0 },
  } as ReleaseRecord;
}

const pageKey = /^changelog-\d+\.html$/;
const idsOn = (html: string) => [...html.matchAll(/<article class="entry[^"]*" id="(v[^"]+)"/g)].map((m) => m[1]!);

/** The archive pages a plan writes (needed), and those it planned at all. */
function archiveWrites(writes: ReadonlyArray<{ key: string; needed: boolean }>): { needed: string[]; planned: string[] } {
  const pages = writes.filter((w) => pageKey.test(w.key));
  return { needed: pages.filter((w) => w.needed).map((w) => w.key).sort(), planned: pages.map((w) => w.key).sort() };
}

async function seed(ws: Workspace, store: ObjectStore, config: RelcastConfig, n: number): Promise<void> {
  await rm(ws.storeDir, { recursive: true, force: true });
  await store.put(CATALOG_KEY, Buffer.from(serializeCatalog(buildCatalog(ID, Array.from({ length: n }, (_, i) => record(i))))), { contentType: "application/json" });
  await syncSite(applyTarget(store, () => {}), config, {});
}

describe("archive pages: every release's notes and downloads on the site", () => {
  let ws: Workspace;
  let config: RelcastConfig;
  let store: ObjectStore;
  beforeAll(async () => {
    ws = await makeWorkspace();
    config = await loadConfig(ws.configFile);
    store = createFolderStore(ws.storeDir);
  });

  it("site sync writes pages of 50 numbered from the oldest release; every release is on exactly one, and changelog.html and index.html link them", async () => {
    await seed(ws, store, config, 120);
    const pages = await Promise.all([1, 2, 3].map(async (n) => (await store.get(`changelog-${n}.html`))!.body.toString("utf8")));
    expect(await store.head("changelog-4.html")).toBeUndefined();
    expect(idsOn(pages[0]!)).toEqual(Array.from({ length: 50 }, (_, i) => `v1.0.${49 - i}`));
    expect(idsOn(pages[2]!)).toEqual(Array.from({ length: 20 }, (_, i) => `v${record(119 - i).version}`));
    const all = pages.flatMap(idsOn);
    expect(new Set(all).size).toBe(120);
    expect(all).toHaveLength(120);
    // Downloads and checksums of an old release, and its notes.
    expect(pages[0]).toContain(`href="downloads/${ID}-1.0.3.dmg"`);
    expect(pages[0]).toContain(`href="downloads/${ID}-1.0.3.zip"`);
    expect(pages[0]).toContain("3".repeat(64));
    expect(pages[0]).toContain("fixed bug 3");
    for (const key of ["changelog.html", "index.html"]) {
      const html = (await store.get(key))!.body.toString("utf8");
      for (const n of [1, 2, 3]) expect(html).toContain(`href="changelog-${n}.html"`);
    }
  });

  it("a publish of a new newest release re-renders only the last page, and the one before when it opens a page; the result is what a full render writes", async () => {
    await seed(ws, store, config, 100);
    expect(await store.head("changelog-3.html")).toBeUndefined();
    const opening = await applyChange(store, config, "publish", { kind: "add", record: record(100) }, [], { site: true });
    expect(archiveWrites(opening.plan.writes)).toEqual({ needed: ["changelog-2.html", "changelog-3.html"], planned: ["changelog-2.html", "changelog-3.html"] });
    const next = await applyChange(store, config, "publish", { kind: "add", record: record(101) }, [], { site: true });
    expect(archiveWrites(next.plan.writes)).toEqual({ needed: ["changelog-3.html"], planned: ["changelog-3.html"] });
    expect(idsOn((await store.get("changelog-3.html"))!.body.toString("utf8"))).toEqual(["v1.1.1", "v1.1.0"]);
    // Page 2 now links to page 3 as the newer one.
    expect((await store.get("changelog-2.html"))!.body.toString("utf8")).toContain(`<a href="changelog-3.html" rel="next">`);
    const full = await planSite(store, store, config, (await storedFeeds(store, config))!);
    expect(archiveWrites(full).needed).toEqual([]);
    expect(archiveWrites(full).planned).toEqual(["changelog-1.html", "changelog-2.html", "changelog-3.html"]);
  });

  it("a yank re-renders the page of its release only: it is marked there with its reason, escaped, and offers no download", async () => {
    await seed(ws, store, config, 110);
    const marker = { yanked: true as const, yankedAt: "2026-11-20T10:00:00.000Z", yankedReason: "corrupt <b>download</b>" };
    const yank = await applyChange(store, config, "yank", { kind: "yank-state", version: "1.0.12", marker }, [], { site: true });
    expect(archiveWrites(yank.plan.writes)).toEqual({ needed: ["changelog-1.html"], planned: ["changelog-1.html"] });
    const page = (await store.get("changelog-1.html"))!.body.toString("utf8");
    expect(page).toContain("corrupt &lt;b&gt;download&lt;/b&gt;");
    expect(page).not.toContain(`href="downloads/${ID}-1.0.12.dmg"`);
    expect(archiveWrites(await planSite(store, store, config, (await storedFeeds(store, config))!)).needed).toEqual([]);
  });

  it("verify holds every archive page to what relcast renders: a changed, missing or extra page is a problem naming it", async () => {
    await seed(ws, store, config, 120);
    const bytes = (await store.get(CATALOG_KEY))!.body;
    const inputs = {
      catalog: { bytes, parsed: parseCatalog(bytes.toString("utf8"), "catalog") }, appcast: undefined,
      settings: { displayName: config.displayName, publisher: config.publisher, appUrl: config.appUrl, appcast: config.appcast },
      expect: { pluginId: ID, appUrl: config.appUrl, maxItemsPerChannel: appcastLimit(config) },
    };
    const archiveProblems = async () => (await checkPublicFeeds(store, inputs)).problems.filter((p) => /changelog-\d/.test(p));
    expect(await archiveProblems()).toEqual([]);
    const file = (n: number) => path.join(ws.storeDir, `changelog-${n}.html`);
    await writeFile(file(2), (await readFile(file(2), "utf8")).replace("7".repeat(64), "0".repeat(64)));
    await rm(file(1));
    await writeFile(file(9), "<p>stray</p>");
    await writeFile(file(4), "<p>stray</p>");
    await writeFile(path.join(ws.storeDir, "changelog-01.html"), "<p>stray</p>");
    const found = await archiveProblems();
    expect(found.some((p) => p.startsWith("changelog-1.html is missing"))).toBe(true);
    expect(found.some((p) => p.startsWith("changelog-2.html differs") && p.includes("0".repeat(40)))).toBe(true);
    // Every name in the pages' pattern that is not page 1 to 3 is found by one listing: past the last, after a gap, or never written.
    for (const key of ["changelog-4.html", "changelog-9.html", "changelog-01.html"]) {
      expect(found.some((p) => p.startsWith(`${key} is not one of the archive pages 1 to 3`)), key).toBe(true);
    }
    // A sync repairs it: the stray pages are removed, the gap behind page 4 included.
    await syncSite(applyTarget(store, () => {}), config, {});
    for (const key of ["changelog-4.html", "changelog-9.html", "changelog-01.html"]) expect(await store.head(key), key).toBeUndefined();
    expect(await archiveProblems()).toEqual([]);
  });

  it("a publish stopped between its feeds and its site (the page it opens not written yet) is the usual warning, not a problem", async () => {
    await seed(ws, store, config, 100);
    const next = Buffer.from(serializeCatalog(buildCatalog(ID, Array.from({ length: 101 }, (_, i) => record(i)))));
    await store.put(CATALOG_KEY, next, { contentType: "application/json" });
    const found = await checkPublicFeeds(store, {
      catalog: { bytes: next, parsed: parseCatalog(next.toString("utf8"), "catalog") }, appcast: undefined,
      settings: { displayName: config.displayName, publisher: config.publisher, appUrl: config.appUrl, appcast: config.appcast },
      expect: { pluginId: ID, appUrl: config.appUrl, maxItemsPerChannel: appcastLimit(config) },
    });
    expect(found.problems.filter((p) => /changelog/.test(p))).toEqual([]);
    expect(found.behind.join("\n")).toMatch(/changelog-2\.html.*changelog-3\.html|changelog-3\.html.*still hold/);
  });
});

const browserPath = chromiumPath();

describe.skipIf(!browserPath.path)(`archive pages in headless Chromium${browserPath.reason ? ` — skipped: ${browserPath.reason}` : ""}`, () => {
  let browser: Browser;
  let server: ServeProcess;
  const problems: string[] = [];

  beforeAll(async () => {
    const ws = await makeWorkspace();
    const config = await loadConfig(ws.configFile);
    await seed(ws, createFolderStore(ws.storeDir), config, 120);
    server = await startServe(["--config", ws.configFile]);
    browser = await launchChromium(browserPath.path!);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function open(url: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 390, height: 800 } });
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("dialog", (d) => problems.push(`dialog: ${d.message()}`));
    page.on("request", (r) => { if (!r.url().startsWith(server.base) && !r.url().startsWith("data:")) problems.push(`external request: ${r.url()}`); });
    expect((await page.goto(url))?.status()).toBe(200);
    return page;
  }

  it("changelog.html leads to page 1; older/newer walk every page to the newest; an old release's notes and downloads are there, escaped", async () => {
    const page = await open(`${server.base}/changelog.html`);
    await page.getByRole("navigation", { name: "Archive pages" }).getByRole("link", { name: "1", exact: true }).click();
    expect(await page.getByRole("navigation", { name: "Archive page 1" }).first().innerText()).toMatch(/Older\s*All pages\s*Newer/);
    expect(new URL(page.url()).pathname).toBe("/changelog-1.html");
    expect(await page.locator("h1").innerText()).toBe("Bridge Plugin releases, page 1");
    expect(await page.locator("main article").count()).toBe(50);
    const old = page.locator("#v1\\.0\\.7");
    expect(await old.locator("h2").innerText()).toBe("Version 1.0.7");
    expect(await old.innerText()).toContain(`<img src=x onerror="document.title='pwned'"> fixed`);
    expect(await old.locator("img").count()).toBe(0);
    const dmg = old.getByRole("link", { name: /Disk image/ });
    expect(await dmg.getAttribute("href")).toBe(`downloads/${ID}-1.0.7.dmg`);
    expect(await page.title()).toBe("Bridge Plugin releases, page 1");
    // No sideways scrolling on a phone.
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    for (const n of [2, 3]) {
      await page.getByRole("link", { name: "Newer" }).first().click();
      expect(new URL(page.url()).pathname).toBe(`/changelog-${n}.html`);
    }
    expect(await page.locator("main article").count()).toBe(20);
    await page.getByRole("link", { name: "Older" }).first().click();
    expect(new URL(page.url()).pathname).toBe("/changelog-2.html");
    expect(await page.locator("main article").first().getAttribute("id")).toBe("v1.0.99");
    await page.goto(`${server.base}/changelog-3.html`);
    await page.getByRole("link", { name: "Newest" }).first().click();
    expect(new URL(page.url()).pathname).toBe("/changelog.html");
    const home = await open(`${server.base}/`);
    await home.getByRole("navigation", { name: "Archive pages" }).getByRole("link", { name: "2", exact: true }).click();
    expect(new URL(home.url()).pathname).toBe("/changelog-2.html");
    expect(problems).toEqual([]);
  });
});
