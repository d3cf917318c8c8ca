import "../helpers/python-without-shim.js"; // python3 and the aws cli without a version manager's shim (see there)
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogEntries, entryOf } from "../../src/catalog/catalog-entry.js";
import { CATALOG_INDEX_KEY, readIndexText, serializeCatalogIndex } from "../../src/catalog/catalog-index.js";
import { goesFirst, readCatalogView, viewFromBytes } from "../../src/catalog/catalog-view.js";
import { writeCatalog, writeWithNewest } from "../../src/catalog/catalog-write.js";
import { planFeeds } from "../../src/catalog/feeds-plan.js";
import type { RelcastConfig } from "../../src/config/schema.js";
import { buildCatalog, entryText, mergeIntoCatalog, serializeCatalog } from "../../src/domain/catalog.js";
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

const CONFIG = { pluginId: "p", displayName: "P", publisher: "Pub", appUrl: "https://updates.example.com", channel: "stable", timezone: "UTC", store: "file://./s" } as RelcastConfig;

describe("catalog: view, index and merge", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-catview-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a view lists every entry, and knows where the first starts when the file is laid out as relcast writes it", () => {
    const catalog = buildCatalog("p", [record(1), record(2, { yanked: true }), record(3, { channel: "beta" })]);
    const text = Buffer.from(serializeCatalog(catalog));
    const view = viewFromBytes("test", '"e"', text, 100);
    expect(view).toMatchObject({ etag: '"e"', pluginId: "p", count: 3 });
    expect([...view.entries].map((e) => [e.version, e.channel, e.build, e.yanked])).toEqual([["1.0.3", "beta", "103", false], ["1.0.2", "stable", "102", true], ["1.0.1", "stable", "101", false]]);
    expect(text.subarray(view.firstOffset!).toString("utf8").startsWith(entryText(catalog.versions[0]!))).toBe(true);
    // Any other layout (here: no indentation) and an empty catalog: no offset, so a publish parses and writes the catalog in full.
    expect(viewFromBytes("test", '"e"', Buffer.from(JSON.stringify(catalog)), 100).firstOffset).toBeUndefined();
    expect(viewFromBytes("test", '"e"', Buffer.from(serializeCatalog(buildCatalog("p", []))), 100).firstOffset).toBeUndefined();
  });

  it("refuses broken or hostile catalogs with E_CATALOG naming the file and the problem", async () => {
    const cases: Array<[string, RegExp]> = [
      ['{"pluginId": "p", "count": 1, "versions": [{"a": 1}', /cat\.json is not valid JSON/],
      ['{"pluginId": "p", "count": 1, "versions": [1]}', /cat\.json does not match the catalog envelope: versions\.0 .*expected object/],
      ['{"pluginId": "p", "count": 1, "versions": {}}', /cat\.json does not match the catalog envelope: versions .*expected array/],
      ['{"count": 0, "versions": []}', /cat\.json does not match the catalog envelope: pluginId /],
      ['[]', /cat\.json does not match the catalog envelope: \(root\) .*expected object/],
      ['{"pluginId": "p", "count": 0, "versions": []} trailing', /cat\.json is not valid JSON/],
      [JSON.stringify({ pluginId: "p", count: 1, versions: [{ ...record(1), publishedAt: "yesterday" }] }), /cat\.json does not match the catalog envelope: versions\.0\.publishedAt /],
      // Versions become key segments: one that is not a semantic version never becomes a path.
      [JSON.stringify({ pluginId: "p", count: 2, versions: [record(2), { ...record(1), version: "../victim" }] }), /cat\.json does not match the catalog envelope: versions\.1\.version must be a semantic version/],
    ];
    for (const [text, message] of cases) {
      expect(() => viewFromBytes("cat.json", '"e"', Buffer.from(text), 100)).toThrow(expect.objectContaining({ code: "E_CATALOG", message: expect.stringMatching(message) }));
    }
    // Read from a store (no index): the error names the store's file.
    const store = createFolderStore(path.join(dir, "broken-store"));
    await store.put("releases/catalog.json", cases[1]![0], { contentType: "application/json" });
    await expect(readCatalogView(store, 100)).rejects.toMatchObject({ code: "E_CATALOG", message: /broken-store\/releases\/catalog\.json does not match the catalog envelope: versions\.0 / });
  });

  it("merges exactly as a full parse would: 300 random catalogs, inserts, backports, re-publishes and yanked re-publishes", async () => {
    const next = rng(42);
    const store = createFolderStore(path.join(dir, "merge-store"));
    const work = path.join(dir, "merge-work");
    await mkdir(work, { recursive: true });
    const config = { ...CONFIG, appcast: { maxAppcastItems: 5 } } as RelcastConfig;
    let spliced = 0;
    for (let round = 0; round < 300; round++) {
      const n = Math.floor(next() * 40);
      const records = Array.from({ length: n }, (_, k) => record(k * 3, { channel: next() < 0.2 ? "beta" : "stable", yanked: next() < 0.1, seconds: next() < 0.1 ? 1_700_000_000 : undefined }));
      const old = buildCatalog("p", records);
      await store.put("releases/catalog.json", serializeCatalog(old), { contentType: "application/json" });
      const pick = next();
      // a new newest release, a backport published later, an old-dated one, or a re-publish (maybe of a yanked version)
      const candidate = pick < 0.4 || n === 0 ? record(n * 3 + 1) : pick < 0.6 ? record(Math.floor(next() * n) * 3 + 1) : pick < 0.8 ? record(Math.floor(next() * n) * 3 + 2, { seconds: 1_600_000_000 }) : { ...records[Math.floor(next() * n)]!, yanked: undefined, yankedAt: undefined, yankedReason: undefined, releaseNotesList: ["changed"] };
      const cleaned = JSON.parse(JSON.stringify(candidate)) as ReleaseRecord;
      if (goesFirst(viewFromBytes("t", "e", Buffer.from(serializeCatalog(old)), 5), cleaned)) spliced++;
      const plan = await planFeeds(store, config, { kind: "add", record: cleaned }, work, round);
      const source = plan.catalog.source;
      const bytes = source.kind === "file" ? await readFile(source.file) : Buffer.alloc(0);
      expect(bytes.toString("utf8"), `round ${round}`).toBe(serializeCatalog(mergeIntoCatalog(old, "p", cleaned)));
      expect(plan.catalog.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
      // The view the plan leaves behind (the pages and the index come from it) agrees with a view read from the new bytes.
      const reread = viewFromBytes("t", "etag2", bytes, 5);
      expect(plan.view.entries).toEqual(reread.entries);
      expect(plan.view.records.map((r) => r.version)).toEqual(reread.records.map((r) => r.version));
      expect(plan.view.firstOffset).toBe(reread.firstOffset);
    }
    // Both ways were taken: the new newest release written in front of the old bytes, and a full parse for the others.
    expect(spliced).toBeGreaterThan(50);
    expect(spliced).toBeLessThan(250);
  });

  it("re-publishing a release as it is changes no byte of the catalog", async () => {
    const store = createFolderStore(path.join(dir, "same-store"));
    const work = path.join(dir, "same-work");
    await mkdir(work, { recursive: true });
    // A yanked entry's fields come in another order than the schema's: a rewrite keeps the order read.
    const old = buildCatalog("p", [record(1), record(2, { yanked: true }), record(3)]);
    await store.put("releases/catalog.json", serializeCatalog(old), { contentType: "application/json" });
    const plan = await planFeeds(store, CONFIG, { kind: "add", record: record(1) }, work);
    const write = plan.writes.find((w) => w.key === "releases/catalog.json")!;
    expect(write).toMatchObject({ needed: false, why: "unchanged" });
    const source = plan.catalog.source;
    expect(source.kind === "file" && (await readFile(source.file, "utf8"))).toBe(serializeCatalog(old));
  });

  it("writes a whole catalog a record at a time, byte for byte as serializeCatalog does", async () => {
    for (const n of [0, 1, 2, 30]) {
      const catalog = buildCatalog("p", Array.from({ length: n }, (_, k) => record(k, { yanked: k % 7 === 3, channel: k % 5 === 0 ? "beta" : "stable" })));
      const out = path.join(dir, `whole-${n}.json`);
      const result = await writeCatalog(catalog, out);
      const bytes = await readFile(out);
      expect(bytes.toString("utf8")).toBe(serializeCatalog(catalog));
      expect(result).toEqual({ firstOffset: viewFromBytes("t", "e", bytes, 5).firstOffset, sizeBytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") });
    }
  });

  it("writes the new newest release in front of the old bytes, whatever the chunks, as serializeCatalog lays it out (read by Python json)", async () => {
    const old = buildCatalog("p", [record(1), record(2)]);
    const text = Buffer.from(serializeCatalog(old));
    const view = viewFromBytes("t", "e", text, 100);
    const expected = serializeCatalog(mergeIntoCatalog(old, "p", record(3)));
    const hashed = new Map<string, string>();
    for (const size of [1, 2, 7, 64, 1 << 20]) {
      for (const reused of [false, true]) {
        const out = path.join(dir, `newest-${size}-${reused}.json`);
        // A reader that reuses one buffer for every chunk (the folder store's in-place read) gives the same bytes and digest.
        const chunks = reused ? reusingChunks(text, size) : chunked(text, size);
        const result = await writeWithNewest("t", chunks, { ...view, firstOffset: view.firstOffset! }, record(3), out, { reusedChunks: reused });
        const written = await readFile(out, "utf8");
        expect(written, `${size} ${reused}`).toBe(expected);
        // The size and SHA-256 it hashed on the way out are the file's, as sha256sum reads it (below, one run for every file).
        expect(result.sizeBytes).toBe(Buffer.byteLength(written));
        hashed.set(out, result.sha256);
        expect(result.firstOffset).toBe(viewFromBytes("t", "e", Buffer.from(written), 100).firstOffset);
      }
    }
    const sums = execFileSync("sha256sum", [...hashed.keys()], { encoding: "utf8" }).trim().split("\n").map((line) => line.split("  ")[0]);
    expect(sums).toEqual([...hashed.values()]);
    const py = execFileSync("python3", ["-c", "import json,sys; c=json.load(open(sys.argv[1])); print(c['count'], [v['version'] for v in c['versions']])", path.join(dir, "newest-7-true.json")], { encoding: "utf8" });
    expect(py.trim()).toBe("3 ['1.0.3', '1.0.2', '1.0.1']");
    // Fewer bytes than the view was read from: the catalog was replaced in between, the round is lost.
    await expect(writeWithNewest("t", chunked(text.subarray(0, 10), 4), { ...view, firstOffset: view.firstOffset! }, record(3), path.join(dir, "short.json"))).rejects.toMatchObject({ name: "PreconditionFailedError" });
  });

  it("keeps only what a publish needs, and the same selection a full parse gives", async () => {
    const records = Array.from({ length: 1000 }, (_, k) => record(k, { channel: k % 10 === 0 ? "beta" : "stable", yanked: k % 97 === 0 }));
    const catalog = buildCatalog("p", records);
    const view = viewFromBytes("t", "e", Buffer.from(serializeCatalog(catalog)), 20);
    expect(view.count).toBe(1000);
    expect([...view.entries].map((e) => e.version)).toEqual(catalog.versions.map((r) => r.version));
    expect(view.records.length).toBeLessThan(120);
    expect(view.records.slice(0, 50).map((r) => r.version)).toEqual(catalog.versions.slice(0, 50).map((r) => r.version));
    expect(appcastRecords(view.records, 20).map((r) => r.version)).toEqual(appcastRecords(catalog.versions, 20).map((r) => r.version));
    expect(expectedLatest(view.records)?.version).toBe(expectedLatest(catalog.versions)?.version);
    expect(view.records.filter((r) => r.yanked).length).toBe(catalog.versions.filter((r) => r.yanked).length);
  });

  const SHA = "ab".repeat(32);

  it("the index is one JSON object: its head on the first line, one entry row a line; a damaged one does not read", () => {
    const catalog = buildCatalog("p", [record(1), record(2, { yanked: true })]);
    const view = viewFromBytes("t", '"abc"', Buffer.from(serializeCatalog(catalog)), 100);
    const text = serializeCatalogIndex(view, 100, SHA, "");
    expect(readIndexText(text)).toMatchObject({ ok: true, catalogEtag: '"abc"', limit: 100, view: { count: 2, entries: view.entries, records: view.records, catalogSha256: SHA } });
    expect(readIndexText(text.slice(0, 50)).ok).toBe(false);
    expect(readIndexText(text.replace('"1.0.1"', "17")).ok).toBe(false);
    // A row or a record edited with the head left alone no longer matches the head's digest.
    for (const edited of [text.replace('"102",1700000120', '"50",1700000120'), text.replace('"buildNumber":102', '"buildNumber":50')]) {
      expect(edited).not.toBe(text);
      expect(readIndexText(edited), edited).toMatchObject({ ok: false, why: expect.stringContaining("digest") });
    }
    expect(JSON.parse(text)).toMatchObject({ format: 4, catalogSha256: SHA, catalogEtag: '"abc"', count: 2, signature: "", entries: [["1.0.2", "stable", "102", 1_700_000_120, 15838, 1], ["1.0.1", "stable", "101", 1_700_000_060, 7919, 0]] });
    expect(text.split("\n").slice(1)).toEqual(['["1.0.2","stable","102",1700000120,15838,1],', '["1.0.1","stable","101",1700000060,7919,0]', "]}", ""]);
    for (const damaged of [text.replace('["1.0.1",', "[17,"), text.replace('["1.0.1",', '["../x",'), text.replace(",0]\n", ",2]\n"), text.replace("],\n[", "]\n["), text.replace("\n]}", "]}"), text.replace(/\n\["1\.0\.1".*/, "")]) {
      expect(readIndexText(damaged).ok, damaged).toBe(false);
    }
    const empty = viewFromBytes("t", '"abc"', Buffer.from(serializeCatalog(buildCatalog("p", []))), 100);
    expect(readIndexText(serializeCatalogIndex(empty, 100, SHA, ""))).toMatchObject({ ok: true, view: { count: 0, entries: empty.entries, records: [] } });
  });

  it("entries are kept as rows of text, read one at a time", () => {
    const records = [record(3, { channel: "beta" }), record(2, { yanked: true }), record(1)];
    const entries = CatalogEntries.of(records.map(entryOf));
    expect(entries.length).toBe(3);
    expect([...entries]).toEqual(records.map(entryOf));
    expect(entries.first()).toEqual(entryOf(records[0]!));
    expect(CatalogEntries.fromText(entries.text)).toEqual(entries);
    expect(["1.0.3", "1.0.2", "1.0.1", "1.0.0", "1.0.", "0.3", "beta"].map((v) => entries.has(v))).toEqual([true, true, true, false, false, false, false]);
    const more = entries.withFirst(entryOf(record(4)));
    expect([...more].map((e) => e.version)).toEqual(["1.0.4", "1.0.3", "1.0.2", "1.0.1"]);
    expect(more.has("1.0.4")).toBe(true);
    const none = CatalogEntries.of([]);
    expect([none.length, none.first(), none.has("1.0.0"), [...none.withFirst(entryOf(record(1)))].length]).toEqual([0, undefined, false, 1]);
  });

  it("a stale or damaged index in a store costs a full read, never a wrong view", async () => {
    const root = path.join(dir, "store");
    const store = createFolderStore(root);
    const first = buildCatalog("p", [record(1)]);
    await store.put("releases/catalog.json", serializeCatalog(first), { contentType: "application/json" });
    const v1 = await readCatalogView(store, 100);
    await store.put(CATALOG_INDEX_KEY, serializeCatalogIndex(v1!, 100, SHA, ""), { contentType: "application/json" });
    // The catalog changes behind the index's back (another tool, a restore): the index no longer matches.
    await store.put("releases/catalog.json", serializeCatalog(buildCatalog("p", [record(1), record(2)])), { contentType: "application/json" });
    const v2 = await readCatalogView(store, 100);
    expect([...v2!.entries].map((e) => e.version)).toEqual(["1.0.2", "1.0.1"]);
    await writeFile(path.join(root, "releases", "catalog-index.json"), "{ damaged");
    await store.put("releases/catalog.json", serializeCatalog(buildCatalog("p", [record(3)])), { contentType: "application/json" });
    expect([...(await readCatalogView(store, 100))!.entries].map((e) => e.version)).toEqual(["1.0.3"]);
  });

  it("the appcast keeps the highest 100 builds per channel by default, every one with maxAppcastItems 0 (read by Python xml.etree)", async () => {
    const records = buildCatalog("p", Array.from({ length: 130 }, (_, k) => record(k, { channel: k < 10 ? "beta" : "stable" }))).versions;
    const config = CONFIG;
    // Each feed in its own file, all counted by one Python run (one line per file).
    const feeds = [appcastOptionsFor(config), appcastOptionsFor({ ...config, appcast: { maxAppcastItems: 0 } }), appcastOptionsFor({ ...config, appcast: { maxAppcastItems: 5 } })];
    const files = feeds.map((_, i) => path.join(dir, `feed-${i}.xml`));
    for (const [i, options] of feeds.entries()) await writeFile(files[i]!, renderAppcast(records, options));
    const counts = execFileSync("python3", ["-c", "import sys, xml.etree.ElementTree as E\nfor f in sys.argv[1:]: print(len(E.parse(f).getroot().find('channel').findall('item')))", ...files], { encoding: "utf8" }).trim().split("\n");
    expect(counts[0]).toBe("110"); // 100 stable + all 10 beta
    expect(counts[1]).toBe("130");
    expect(counts[2]).toBe("10");
  });

  it("index.html lists the newest 50 and says where the older ones are", () => {
    const catalog = buildCatalog("p", Array.from({ length: 60 }, (_, k) => record(k)));
    const html = renderDownloadsPage({ displayName: "P", publisher: "Pub", pluginId: "p", appUrl: "https://p.example" }, catalog);
    // The latest once, at the top, and the 49 other newest versions under it.
    expect(html.match(/<li class="version"/g)?.length).toBe(49);
    expect(html.match(/Version 1\.0\.59/g)?.length).toBe(1);
    expect(html).not.toContain('id="v1.0.9"');
    expect(html).toMatch(/The downloads and notes of 10 older releases are on the archive pages[^<]*<a href="api\/v1\/plugins\/p\/releases\.json">/);
    expect(html).toContain(`<a href="changelog-1.html">1</a><a href="changelog-2.html">2</a></nav>`);
  });
});
