import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumPath, launchChromium } from "../helpers/chromium.js";
import { typicalIcns } from "../helpers/icns-bytes.js";
import { renderChangelogPage } from "../../src/site/changelog-page.js";
import { renderDownloadsPage } from "../../src/site/downloads-page.js";
import type { ReleaseRecord } from "../../src/domain/record-schema.js";
import { storeWorkspace } from "../helpers/published-store.js";
import { REPO_ROOT, runCli } from "../helpers/run-cli.js";
import { startServe, type ServeProcess } from "../helpers/serve-process.js";

const browserPath = chromiumPath();
const ARTIFACTS = path.join(REPO_ROOT, "test-artifacts");
const APP_URL = "https://updates.example.com";

/** Written aside and renamed into place: two suites in one checkout never leave a half-written screenshot. */
async function saveArtifact(name: string, bytes: Buffer): Promise<void> {
  const temp = path.join(ARTIFACTS, `.${name}-${process.pid}-${randomBytes(4).toString("hex")}`);
  await writeFile(temp, bytes);
  await rename(temp, path.join(ARTIFACTS, name));
}

// 1.2.0 at 03:30 UTC on 27 November is still 26 November in the config's zone (America/New_York).
const RELEASES = [
  { version: "1.0.0", build: 100, at: "2026-09-01T09:00:00.000Z", icon: false },
  { version: "1.1.0", build: 110, at: "2026-10-01T09:00:00.000Z", icon: true },
  { version: "1.2.0", build: 120, at: "2026-11-27T03:30:00.000Z", icon: true },
];

describe.skipIf(!browserPath.path)(`the product site in headless Chromium${browserPath.reason ? ` — skipped: ${browserPath.reason}` : ""}`, () => {
  let browser: Browser;
  let server: ServeProcess;
  const records = new Map<string, Record<string, any>>();
  const problems: string[] = [];

  async function open(url: string, options: { width?: number; height?: number; dark?: boolean } = {}): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: options.width ?? 1280, height: options.height ?? 900 }, colorScheme: options.dark ? "dark" : "light" });
    page.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`); });
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));
    page.on("request", (r) => { if (!r.url().startsWith(server.base) && !r.url().startsWith("data:")) problems.push(`external request: ${r.url()}`); });
    const res = await page.goto(url);
    expect(res?.status()).toBe(200);
    return page;
  }

  // The product page at the default size in the light scheme: one scenario whose checks are spread over several tests, loaded once.
  let product: Promise<Page> | undefined;
  const productPage = () => (product ??= open(`${server.base}/`));

  const meta = (page: Page, property: string) => page.locator(`meta[property="${property}"], meta[name="${property}"]`).getAttribute("content");
  const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

  beforeAll(async () => {
    // Chromium starts while the releases publish (it waits on nothing of theirs); awaited below. Set as soon as it is
    // up, so afterAll closes it even when a publish fails first.
    const launched = launchChromium(browserPath.path!).then((b) => (browser = b));
    launched.catch(() => {}); // a failed launch is reported where it is awaited, not as an unhandled rejection first
    const ws = await storeWorkspace();
    for (const r of RELEASES) {
      const p = await ws.plugin(r.version, r.build, r.icon ? { icon: { file: "AppIcon.icns", bytes: typicalIcns() } } : {});
      const res = await runCli(ws.publishArgs(p, r.version, ["--json", "--published-at", r.at]));
      expect(res.code, res.stderr).toBe(0);
      records.set(r.version, JSON.parse(res.stdout));
    }
    expect((await runCli(["yank", "1.1.0", "--reason", "corrupt <b>download</b>", "--config", ws.configFile])).code).toBe(0);
    server = await startServe(["--config", ws.configFile]);
    await launched;
    await mkdir(ARTIFACTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("a product page: the display name, the latest once with its requirement and date, the disk image as the main download", async () => {
    const page = await productPage();
    expect(await page.title()).toBe("Bridge Plugin");
    expect(await page.locator("h1").innerText()).toBe("Bridge Plugin");
    const hero = page.locator("#latest");
    expect(await hero.locator("h2").innerText()).toBe("Version 1.2.0");
    expect(await page.getByText("Version 1.2.0", { exact: true }).count()).toBe(1);
    expect(await hero.innerText()).toContain("Requires macOS 12.0 or later");
    const time = hero.locator(".facts time");
    expect(await time.getAttribute("datetime")).toBe("2026-11-27T03:30:00.000Z");
    expect(await time.innerText()).toBe("26 November 2026");
    // One main button, the disk image; the zip and the checksums are plain links.
    expect(await page.locator("a.button").count()).toBe(1);
    const button = hero.locator("a.button");
    expect(new URL((await button.getAttribute("href"))!, `${server.base}/`).pathname).toBe("/downloads/bridge-plugin-1.2.0.dmg");
    const download = await Promise.all([page.waitForEvent("download"), button.click()]).then(([d]) => d);
    expect(createHash("sha256").update(await readFile(await download.path())).digest("hex")).toBe(records.get("1.2.0")!.sha256);
    expect(await hero.locator(".also a").first().getAttribute("href")).toBe("downloads/bridge-plugin-1.2.0.zip");
    expect(await hero.locator("details.checksums").innerText()).toContain("SHA-256");
    expect(await hero.locator("li").allInnerTexts()).toEqual(records.get("1.2.0")!.releaseNotesList);
    // The other versions: the yanked one marked, its reason as text, no downloads.
    const others = await page.locator(".versions h3").allInnerTexts();
    expect(others.map((t) => t.replace(/\s+/g, " ").trim())).toEqual(["Version 1.1.0 YANKED", "Version 1.0.0"]);
    expect(await page.locator("#v1\\.1\\.0").innerText()).toContain("corrupt <b>download</b>");
    expect(await page.locator("#v1\\.1\\.0 b").count()).toBe(0);
    expect(await page.locator("#v1\\.1\\.0 a[download]").count()).toBe(0);
    expect(await page.locator("#v1\\.0\\.0 a[download]").first().getAttribute("href")).toBe("downloads/bridge-plugin-1.0.0.dmg");
    // Nothing of relcast's own data.
    expect(await page.content()).not.toMatch(/Product API|expense/i);
    await saveArtifact("downloads-page.png", await page.screenshot({ fullPage: true }));
    expect(problems).toEqual([]);
  });

  it("the icon from the bundle's .icns loads, and the meta description and Open Graph tags describe the product", async () => {
    const page = await productPage();
    const icon = page.locator("header img.app-icon");
    await icon.evaluate((img: HTMLImageElement) => img.decode());
    expect(await icon.evaluate((img: HTMLImageElement) => [img.complete, img.naturalWidth, img.naturalHeight])).toEqual([true, 256, 256]);
    const iconPath = "icons/bridge-plugin-1.2.0-icon.png";
    expect(await icon.getAttribute("src")).toBe(iconPath);
    const served = Buffer.from(await (await fetch(`${server.base}/${iconPath}`)).arrayBuffer());
    expect(createHash("sha256").update(served).digest("hex")).toBe(records.get("1.2.0")!.icon.sha256);
    expect(await meta(page, "og:title")).toBe("Bridge Plugin");
    expect(await meta(page, "og:url")).toBe(`${APP_URL}/`);
    expect(await meta(page, "og:image")).toBe(`${APP_URL}/${iconPath}`);
    const description = await meta(page, "description");
    expect(description).toContain("Bridge Plugin 1.2.0 for Mac, by Example Tools. Requires macOS 12.0 or later.");
    expect(await meta(page, "og:description")).toBe(description);
    expect(await page.locator('link[rel="icon"]').getAttribute("href")).toBe(iconPath);
    expect(problems).toEqual([]);
  });

  it("light and dark: the colour scheme changes the computed colours, and text keeps its contrast", async () => {
    const colours = async (dark: boolean) => {
      // Light: the product page the tests above read; dark: the same page in a context that prefers the dark scheme.
      const page = dark ? await open(`${server.base}/`, { dark }) : await productPage();
      const got = await page.evaluate(() => {
        const s = (sel: string) => getComputedStyle(document.querySelector(sel)!);
        return { bg: s("body").backgroundColor, fg: s("body").color, card: s("#latest").backgroundColor, button: s("a.button").backgroundColor, buttonText: s("a.button").color };
      });
      await saveArtifact(`downloads-page-${dark ? "dark" : "light"}.png`, await page.screenshot());
      if (dark) await page.close();
      return got;
    };
    const light = await colours(false);
    const dark = await colours(true);
    for (const k of ["bg", "fg", "card", "button"] as const) expect(dark[k], k).not.toBe(light[k]);
    const lum = (rgb: string) => {
      const [r, g, b] = rgb.match(/\d+/g)!.slice(0, 3).map((v) => Number(v) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
    };
    const contrast = (a: string, b: string) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x! + 0.05) / (y! + 0.05); };
    for (const c of [light, dark]) {
      expect(contrast(c.fg, c.card)).toBeGreaterThanOrEqual(7);
      expect(contrast(c.buttonText, c.button)).toBeGreaterThanOrEqual(4.5);
    }
    expect(lum(dark.bg)).toBeLessThan(lum(light.bg));
    expect(problems).toEqual([]);
  });

  it("on a 390 px wide phone both pages fit: no horizontal scrolling, a full-width button, readable text", async () => {
    for (const [file, dark] of [["index.html", false], ["changelog.html", true]] as const) {
      const page = await open(`${server.base}/${file}`, { width: 390, height: 844, dark });
      expect(await overflow(page)).toBeLessThanOrEqual(0);
      const fontSize = await page.evaluate(() => parseFloat(getComputedStyle(document.body).fontSize));
      expect(fontSize).toBeGreaterThanOrEqual(16);
      if (file === "index.html") {
        const box = (await page.locator("#latest a.button").boundingBox())!;
        expect(box.height).toBeGreaterThanOrEqual(44);
        expect(box.x).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width).toBeLessThanOrEqual(390);
        expect(box.width).toBeGreaterThan(300);
      }
      await saveArtifact(`${file.replace(".html", "")}-390${dark ? "-dark" : ""}.png`, await page.screenshot({ fullPage: true }));
      await page.close();
    }
    expect(problems).toEqual([]);
  });

  it("on a 390 px phone a long one-word name, a 140-character unbroken one, a long publisher and version still fit (both pages)", async () => {
    const catalog = await (await fetch(`${server.base}/api/v1/plugins/bridge-plugin/releases.json`)).json() as { count: number; versions: ReleaseRecord[] };
    const longVersion = { ...catalog.versions[0]!, version: `1.3.0-beta.${"x".repeat(90)}`, channel: "beta" };
    const versions = [longVersion, ...catalog.versions];
    // One 390 px page at the server's address (so the pages' relative links and icon resolve there); each rendering replaces its whole document.
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(`${server.base}/`);
    for (const displayName of ["Internationalization", "N".repeat(140)]) {
      const identity = { pluginId: "bridge-plugin", displayName, publisher: `Example${"Tools".repeat(20)}`, appUrl: APP_URL };
      for (const html of [renderDownloadsPage(identity, { count: versions.length, versions }), renderChangelogPage(identity, { count: versions.length, versions })]) {
        await page.setContent(html);
        expect(await page.locator("h1").innerText()).toContain(displayName);
        expect(await overflow(page), `${displayName.slice(0, 24)}: ${await page.title()}`).toBeLessThanOrEqual(0);
      }
    }
    await page.close();
  });

  it("changelog.html is the plugin's own history: every release's notes newest first, the yanked one marked", async () => {
    const page = await open(`${server.base}/changelog.html`);
    expect(await page.title()).toBe("Bridge Plugin release notes");
    expect(await page.locator("article.entry").evaluateAll((els) => els.map((e) => e.id))).toEqual(["v1.2.0", "v1.1.0", "v1.0.0"]);
    for (const v of ["1.2.0", "1.1.0", "1.0.0"]) {
      expect(await page.locator(`#v${v.replace(/\./g, "\\.")} .notes li`).allInnerTexts()).toEqual(records.get(v)!.releaseNotesList);
    }
    const yanked = page.locator("#v1\\.1\\.0");
    expect(await yanked.locator(".badge.yanked").innerText()).toMatch(/yanked/i);
    expect(await yanked.locator(".yank").innerText()).toContain("corrupt <b>download</b>");
    expect(await page.locator("#v1\\.2\\.0 .badge.latest").count()).toBe(1);
    expect(await page.locator("#v1\\.2\\.0 time").innerText()).toBe("26 November 2026");
    expect(await page.content()).not.toMatch(/Product API|expense|Java/i);
    expect(await meta(page, "og:url")).toBe(`${APP_URL}/changelog.html`);
    // From the downloads page and back.
    const index = await open(`${server.base}/`);
    await index.locator('footer a[href="changelog.html"]').click();
    await index.waitForURL(`${server.base}/changelog.html`);
    await index.locator("footer a").click();
    await index.waitForURL(`${server.base}/index.html`);
    expect(problems).toEqual([]);
  });
});
