import { createHash, randomBytes } from "node:crypto";
import { mkdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumPath, launchChromium } from "../helpers/chromium.js";
import { publishDemoReleases, storeWorkspace } from "../helpers/published-store.js";
import { REPO_ROOT, runCli } from "../helpers/run-cli.js";
import { startServe, type ServeProcess } from "../helpers/serve-process.js";

const browserPath = chromiumPath();
const ARTIFACTS = path.join(REPO_ROOT, "test-artifacts");

/** Written aside and renamed into place: two suites in one checkout never leave a half-written screenshot. */
async function saveArtifact(name: string, bytes: Buffer): Promise<void> {
  const temp = path.join(ARTIFACTS, `.${name}-${process.pid}-${randomBytes(4).toString("hex")}`);
  await writeFile(temp, bytes);
  await rename(temp, path.join(ARTIFACTS, name));
}

describe.skipIf(!browserPath.path)(`downloads page in headless Chromium${browserPath.reason ? ` — skipped: ${browserPath.reason}` : ""}`, () => {
  let browser: Browser;
  let server: ServeProcess;
  let records: Array<Record<string, any>>;
  const problems: string[] = [];

  async function open(url: string, viewport = { width: 1280, height: 900 }): Promise<Page> {
    const page = await browser.newPage({ viewport });
    page.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`); });
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));
    page.on("request", (r) => { if (!r.url().startsWith(server.base)) problems.push(`external request: ${r.url()}`); });
    const res = await page.goto(url);
    expect(res?.status()).toBe(200);
    return page;
  }

  beforeAll(async () => {
    const ws = await storeWorkspace();
    records = await publishDemoReleases(ws);
    // One yanked release shows how the page marks it.
    expect((await runCli(["yank", "1.1.0", "--reason", "corrupt <b>download</b>", "--config", ws.configFile])).code).toBe(0);
    server = await startServe(["--config", ws.configFile]);
    browser = await launchChromium(browserPath.path!);
    await mkdir(ARTIFACTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("loads with no console errors or outside requests, latest first, every version listed with its notes", async () => {
    const page = await open(`${server.base}/`);
    expect(await page.title()).toBe("Bridge Plugin downloads");
    expect(await page.locator("main").count()).toBe(1);
    expect(await page.locator("h1").innerText()).toBe("Bridge Plugin");
    expect(await page.locator("article h3").first().innerText()).toBe("Version 1.2.0");
    const all = await page.locator("#all-heading ~ article h3").allInnerTexts();
    expect(all.map((t) => t.replace(/\s+/g, " ").trim())).toEqual(["Version 1.2.0", "Version 1.1.0 yanked", "Version 1.0.0"]);
    const latest = page.locator("#latest");
    expect(await latest.innerText()).toContain(records[2]!.sha256);
    expect(await latest.innerText()).toContain(records[2]!.publishedAtIso);
    expect(await latest.locator("li").allInnerTexts()).toEqual(records[2]!.releaseNotesList);
    // The yank reason is shown as text, never as markup.
    expect(await page.locator("#v1\\.1\\.0").innerText()).toContain("corrupt <b>download</b>");
    expect(await page.locator("#v1\\.1\\.0 b").count()).toBe(0);
    expect(await page.locator("#v1\\.1\\.0 a.button").count()).toBe(0);
    await saveArtifact("downloads-page.png", await page.screenshot({ fullPage: true }));
    expect(problems).toEqual([]);
  });

  it("the download button of the latest version returns its exact bytes", async () => {
    const page = await open(`${server.base}/`);
    const link = page.locator("#latest a.button").first();
    expect(await link.innerText()).toMatch(/^Download \.dmg \(262 KB\)/);
    const href = await link.getAttribute("href");
    const download = await Promise.all([page.waitForEvent("download"), link.click()]).then(([d]) => d);
    const bytes = await import("node:fs/promises").then((fs) => download.path().then((p) => fs.readFile(p)));
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(records[2]!.sha256);
    expect(new URL(href!, `${server.base}/`).pathname).toBe("/downloads/bridge-plugin-1.2.0.dmg");
    expect(problems).toEqual([]);
  });

  it("reads on a phone: no horizontal scrolling, buttons large enough to tap", async () => {
    const page = await open(`${server.base}/index.html`, { width: 360, height: 740 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    const box = await page.locator("#latest a.button").first().boundingBox();
    expect(box!.height).toBeGreaterThanOrEqual(40);
    expect(box!.x + box!.width).toBeLessThanOrEqual(360);
    await saveArtifact("downloads-page-phone.png", await page.screenshot({ fullPage: true }));
    expect(problems).toEqual([]);
  });

  it("the changelog page lists the product API changes newest first", async () => {
    const page = await open(`${server.base}/changelog.html`);
    const dates = await page.locator("tbody th time").allInnerTexts();
    expect(dates.length).toBe(8);
    expect([...dates].sort().reverse()).toEqual(dates);
    expect(dates[0]).toBe("2025-02-23");
    expect(await page.locator("tbody tr").last().innerText()).toContain("Query string must be included in the request-line");
    const back = page.locator("footer a");
    await back.click();
    await page.waitForURL(`${server.base}/index.html`);
    expect(problems).toEqual([]);
  });
});
