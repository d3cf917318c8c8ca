import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CATALOG_INDEX_KEY, parseCatalogIndex, serializeCatalogIndex } from "../../src/catalog/catalog-index.js";
import { scanCatalog } from "../../src/catalog/catalog-scan.js";
import { readCatalogView, viewFromStream, viewWith } from "../../src/catalog/catalog-view.js";
import { writeMergedCatalog } from "../../src/catalog/catalog-write.js";
import { buildCatalog, mergeIntoCatalog, serializeCatalog } from "../../src/domain/catalog.js";
import { appcastRecords } from "../../src/domain/appcast-selection.js";
import { renderAppcast } from "../../src/domain/appcast.js";
import { appcastOptionsFor } from "../../src/domain/appcast.js";
import { expectedLatest } from "../../src/domain/latest-choice.js";
import { renderDownloadsPage } from "../../src/site/downloads-page.js";
import type { ReleaseRecord } from "../../src/domain/record-schema.js";
import { createFolderStore } from "../../src/store/folder-store.js";

/** A complete §2.6 record; `i` orders versions, builds and dates. */
function record(i: number, o: { channel?: string; yanked?: boolean; seconds?: number; build?: number; notes?: string } = {}): ReleaseRecord {
  const version = `1.${Math.floor(i / 100)}.${i % 100}`;
  const url = (f: string) => `https://updates.example.com/downloads/p-${version}.${f}`;
  return {
    pluginId: "p", displayName: "P \"quoted\" \\ plugin", publisher: "Pub", version, semver: version, channel: o.channel ?? "stable", artifactType: "dmg",
    summary: `Release ${version} — ünïcödé {braces} [brackets]`, releaseNotes: `- ${o.notes ?? "note"}`, releaseNotesList: [o.notes ?? "note"], sizeBytes: 1000 + i,
    downloadUrl: `file:///s/releases/${version}/p-${version}.dmg`, publicDownloadUrl: url("dmg"), publicLatestDownloadUrl: url("dmg"),
    appcastUrl: "file:///s/releases/appcast.xml", publicAppcastUrl: "https://updates.example.com/api/v1/plugins/p/appcast.xml",
    objectStore: { bucket: "/s", objectPath: `releases/${version}/p-${version}.dmg`, artifactFileName: `p-${version}.dmg`, latestObjectPath: "releases/latest/p-x.dmg" },
    autoupdate: { publicDownloadUrl: url("zip"), buildNumber: o.build ?? 100 + i, edSignature: "c2ln", sizeBytes: 10 },
    publishedAt: { _seconds: o.seconds ?? 1_700_000_000 + i * 60, _nanoseconds: (i * 7919) % 1_000_000_000 },
    updatedAt: { _seconds: o.seconds ?? 1_700_000_000 + i * 60, _nanoseconds: 0 },
    ...(o.yanked ? { yanked: true as const, yankedAt: "2026-01-01T00:00:00.000Z", yankedReason: "broken" } : {}),
  } as ReleaseRecord;
}

/** Chunks of `buf` through one buffer that is overwritten for the next chunk, as an in-place reader does. */
async function* reusingChunks(buf: Buffer, size: number): AsyncGenerator<Buffer> {
  const scratch = Buffer.alloc(size);
  for (let i = 0; i < buf.length; i += size) {
    const n = buf.copy(scratch, 0, i, Math.min(buf.length, i + size));
    yield scratch.subarray(0, n);
    scratch.fill(0x78);
  }
}

/** Yields `buf` in chunks of `size` bytes, to cross every boundary. */
async function* chunked(buf: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296);
}

describe("streaming catalog: scan, view, merge", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-catstream-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("hands over every entry byte for byte, whatever the chunk size", async () => {
    const catalog = buildCatalog("p", [record(1), record(2, { yanked: true }), record(3, { channel: "beta" })]);
    const text = Buffer.from(serializeCatalog(catalog));
    for (const size of [1, 2, 3, 7, 64, 1 << 20]) {
      const seen: unknown[] = [];
      const envelope = await scanCatalog("test", chunked(text, size), (raw, _i, offset) => {
        seen.push(JSON.parse(raw.toString("utf8")));
        expect(text.subarray(offset, offset + raw.length).equals(raw)).toBe(true);
      });
      expect(envelope).toEqual({ pluginId: "p", count: 3 });
      expect(seen).toEqual(JSON.parse(text.toString("utf8")).versions);
    }
  });

  it("refuses broken catalogs with E_CATALOG naming the problem", async () => {
    const cases: Array<[string, RegExp]> = [
      ['{"pluginId": "p", "count": 1, "versions": [{"a": 1}', /not valid JSON/],
      ['{"pluginId": "p", "count": 1, "versions": [1]}', /versions\[0\] is not an object/],
      ['{"pluginId": "p", "count": 1, "versions": {}}', /versions is missing or not an array/],
      ['{"count": 0, "versions": []}', /pluginId is missing/],
      ['[]', /not a JSON object/],
      ['{"pluginId": "p", "count": 0, "versions": []} trailing', /not valid JSON/],
    ];
    for (const [text, message] of cases) {
      await expect(scanCatalog("cat.json", chunked(Buffer.from(text), 5), () => undefined)).rejects.toMatchObject({ code: "E_CATALOG", message });
    }
    const badRecord = Buffer.from(JSON.stringify({ pluginId: "p", count: 1, versions: [{ ...record(1), publishedAt: "yesterday" }] }));
    await expect(viewFromStream("cat.json", '"e"', chunked(badRecord, 100), 100)).rejects.toMatchObject({ code: "E_CATALOG", message: /versions\.0\.publishedAt/ });
  });

  it("merges exactly as a full parse would: 300 random catalogs, inserts, re-publishes and yanked re-publishes", async () => {
    const next = rng(42);
    for (let round = 0; round < 300; round++) {
      const n = Math.floor(next() * 40);
      const records = Array.from({ length: n }, (_, k) => record(k * 3, { channel: next() < 0.2 ? "beta" : "stable", yanked: next() < 0.1, seconds: next() < 0.1 ? 1_700_000_000 : undefined }));
      const old = buildCatalog("p", records);
      const text = Buffer.from(serializeCatalog(old));
      const pick = next();
      // a new newest release, a backport published later, an old-dated one, or a re-publish (maybe of a yanked version)
      const candidate = pick < 0.4 || n === 0 ? record(n * 3 + 1) : pick < 0.6 ? record(Math.floor(next() * n) * 3 + 1) : pick < 0.8 ? record(Math.floor(next() * n) * 3 + 2, { seconds: 1_600_000_000 }) : { ...records[Math.floor(next() * n)]!, yanked: undefined, yankedAt: undefined, yankedReason: undefined, releaseNotesList: ["changed"] };
      const cleaned = JSON.parse(JSON.stringify(candidate)) as ReleaseRecord;
      const view = await viewFromStream("t", "etag", chunked(text, 1 + Math.floor(next() * 500)), 5);
      const previous = view.records.find((r) => r.version === cleaned.version);
      const merged = previous?.yanked && !cleaned.yanked ? { ...cleaned, yanked: true as const, yankedAt: previous.yankedAt!, yankedReason: previous.yankedReason! } : cleaned;
      const out = path.join(dir, `merged-${round}.json`);
      await writeMergedCatalog("t", chunked(text, 1 + Math.floor(next() * 500)), view, merged, out);
      const expected = JSON.parse(serializeCatalog(mergeIntoCatalog(old, "p", cleaned)));
      const got = JSON.parse(await readFile(out, "utf8"));
      expect(got, `round ${round}`).toEqual(expected);
      // A reader that reuses one buffer for every chunk (the folder store's in-place read) gives the same bytes and digest.
      const reusedOut = path.join(dir, `merged-${round}-reused.json`);
      const reused = await writeMergedCatalog("t", reusingChunks(text, 1 + Math.floor(next() * 500)), view, merged, reusedOut, { reusedChunks: true });
      const reusedBytes = await readFile(reusedOut);
      expect(reusedBytes.equals(await readFile(out)), `round ${round}`).toBe(true);
      expect(reused.sha256).toBe(createHash("sha256").update(reusedBytes).digest("hex"));
      // The incremental view agrees with a view read from the new bytes.
      const after = viewWith(view, merged, "etag2", 5);
      const reread = await viewFromStream("t", "etag2", chunked(await readFile(out), 4096), 5);
      expect(after.entries).toEqual(reread.entries);
      expect(after.records.map((r) => r.version)).toEqual(reread.records.map((r) => r.version));
    }
  });

  it("writes a catalog an independent parser (Python json) reads, laid out as serializeCatalog lays it out", async () => {
    const old = buildCatalog("p", [record(1), record(2)]);
    const view = await viewFromStream("t", "e", chunked(Buffer.from(serializeCatalog(old)), 10), 100);
    const out = path.join(dir, "layout.json");
    const result = await writeMergedCatalog("t", chunked(Buffer.from(serializeCatalog(old)), 10), view, record(3), out);
    const written = await readFile(out, "utf8");
    expect(written).toBe(serializeCatalog(mergeIntoCatalog(old, "p", record(3))));
    // The size and SHA-256 it hashed on the way out are the file's, as sha256sum reads it.
    expect(result.sizeBytes).toBe(Buffer.byteLength(written));
    expect(result.sha256).toBe(execFileSync("sha256sum", [out], { encoding: "utf8" }).split(" ")[0]);
    const py = execFileSync("python3", ["-c", "import json,sys; c=json.load(open(sys.argv[1])); print(c['count'], [v['version'] for v in c['versions']])", out], { encoding: "utf8" });
    expect(py.trim()).toBe("3 ['1.0.3', '1.0.2', '1.0.1']");
  });

  it("keeps only what a publish needs, and the same selection a full parse gives", async () => {
    const records = Array.from({ length: 1000 }, (_, k) => record(k, { channel: k % 10 === 0 ? "beta" : "stable", yanked: k % 97 === 0 }));
    const catalog = buildCatalog("p", records);
    const view = await viewFromStream("t", "e", chunked(Buffer.from(serializeCatalog(catalog)), 65536), 20);
    expect(view.count).toBe(1000);
    expect(view.entries.map((e) => e.version)).toEqual(catalog.versions.map((r) => r.version));
    expect(view.records.length).toBeLessThan(120);
    expect(view.records.slice(0, 50).map((r) => r.version)).toEqual(catalog.versions.slice(0, 50).map((r) => r.version));
    expect(appcastRecords(view.records, 20).map((r) => r.version)).toEqual(appcastRecords(catalog.versions, 20).map((r) => r.version));
    expect(expectedLatest(view.records)?.version).toBe(expectedLatest(catalog.versions)?.version);
    expect(view.records.filter((r) => r.yanked).length).toBe(catalog.versions.filter((r) => r.yanked).length);
  });

  it("trusts the index only for the catalog ETag and appcast limit it was written for", async () => {
    const catalog = buildCatalog("p", [record(1), record(2, { yanked: true })]);
    const view = await viewFromStream("t", '"abc"', chunked(Buffer.from(serializeCatalog(catalog)), 100), 100);
    const text = serializeCatalogIndex(view, 100);
    expect(parseCatalogIndex(text, '"abc"', 100)).toMatchObject({ count: 2, entries: view.entries, records: view.records });
    expect(parseCatalogIndex(text, '"other"', 100)).toBeUndefined();
    expect(parseCatalogIndex(text, '"abc"', undefined)).toBeUndefined();
    expect(parseCatalogIndex(text.slice(0, 50), '"abc"', 100)).toBeUndefined();
    expect(parseCatalogIndex(text.replace('"1.0.1"', "17"), '"abc"', 100)).toBeUndefined();
  });

  it("a stale or damaged index in a store costs a full read, never a wrong view", async () => {
    const root = path.join(dir, "store");
    const store = createFolderStore(root);
    const first = buildCatalog("p", [record(1)]);
    await store.put("releases/catalog.json", serializeCatalog(first), { contentType: "application/json" });
    const v1 = await readCatalogView(store, 100);
    await store.put(CATALOG_INDEX_KEY, serializeCatalogIndex(v1!, 100), { contentType: "application/json" });
    // The catalog changes behind the index's back (another tool, a restore): the index no longer matches.
    await store.put("releases/catalog.json", serializeCatalog(buildCatalog("p", [record(1), record(2)])), { contentType: "application/json" });
    const v2 = await readCatalogView(store, 100);
    expect(v2!.entries.map((e) => e.version)).toEqual(["1.0.2", "1.0.1"]);
    await writeFile(path.join(root, "releases", "catalog-index.json"), "{ damaged");
    await store.put("releases/catalog.json", serializeCatalog(buildCatalog("p", [record(3)])), { contentType: "application/json" });
    expect((await readCatalogView(store, 100))!.entries.map((e) => e.version)).toEqual(["1.0.3"]);
  });

  it("the appcast keeps the highest 100 builds per channel by default, every one with maxAppcastItems 0 (read by Python xml.etree)", async () => {
    const records = buildCatalog("p", Array.from({ length: 130 }, (_, k) => record(k, { channel: k < 10 ? "beta" : "stable" }))).versions;
    const config = { pluginId: "p", displayName: "P", publisher: "Pub", appUrl: "https://u.example.com", channel: "stable", timezone: "UTC", store: "file://./s" } as Parameters<typeof appcastOptionsFor>[0];
    const count = async (xml: string) => {
      const file = path.join(dir, "feed.xml");
      await writeFile(file, xml);
      return execFileSync("python3", ["-c", "import sys, xml.etree.ElementTree as E; items=E.parse(sys.argv[1]).getroot().find('channel').findall('item'); print(len(items))", file], { encoding: "utf8" }).trim();
    };
    expect(await count(renderAppcast(records, appcastOptionsFor(config)))).toBe("110"); // 100 stable + all 10 beta
    expect(await count(renderAppcast(records, appcastOptionsFor({ ...config, appcast: { maxAppcastItems: 0 } })))).toBe("130");
    expect(await count(renderAppcast(records, appcastOptionsFor({ ...config, appcast: { maxAppcastItems: 5 } })))).toBe("10");
  });

  it("index.html lists the newest 50 and says where the older ones are", () => {
    const catalog = buildCatalog("p", Array.from({ length: 60 }, (_, k) => record(k)));
    const html = renderDownloadsPage({ displayName: "P", publisher: "Pub", pluginId: "p" }, catalog);
    expect(html.match(/<article class="release"/g)?.length).toBe(50);
    expect(html).toContain("Version 1.0.59");
    expect(html).not.toContain('id="v1.0.9"');
    expect(html).toMatch(/10 older releases are listed in <a href="api\/v1\/plugins\/p\/releases\.json">/);
  });
});
