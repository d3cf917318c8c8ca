import "../helpers/python-without-shim.js"; // python3 without a version manager's shim (see there)
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyTarget, applyWrites } from "../../src/apply/apply-write.js";
import { CatalogEntries } from "../../src/catalog/catalog-entry.js";
import { CATALOG_INDEX_KEY, readIndexText, serializeCatalogIndex } from "../../src/catalog/catalog-index.js";
import { readTrustedIndex, signCatalogIndex } from "../../src/catalog/catalog-index-signature.js";
import { readCatalogView, viewFromBytes } from "../../src/catalog/catalog-view.js";
import { planFeeds } from "../../src/catalog/feeds-plan.js";
import type { RelcastConfig } from "../../src/config/schema.js";
import { buildCatalog, serializeCatalog } from "../../src/domain/catalog.js";
import type { ReleaseRecord } from "../../src/domain/record-schema.js";
import { parseSigningKey, type SigningKey } from "../../src/sparkle/signing-key.js";
import { createFolderStore } from "../../src/store/folder-store.js";
import { newKey } from "../helpers/workspace.js";

/** A complete §2.6 record; `i` orders versions, builds and dates. */
function record(i: number, o: { yanked?: boolean; build?: number } = {}): ReleaseRecord {
  const version = `1.0.${i}`;
  const url = (f: string) => `https://updates.example.com/downloads/p-${version}.${f}`;
  return {
    pluginId: "p", displayName: "P", publisher: "Pub", version, semver: version, channel: "stable", artifactType: "dmg",
    summary: `Release ${version}`, releaseNotes: "- note", releaseNotesList: ["note"], sizeBytes: 1000 + i,
    downloadUrl: `file:///s/releases/${version}/p-${version}.dmg`, publicDownloadUrl: url("dmg"), publicLatestDownloadUrl: url("dmg"),
    appcastUrl: "file:///s/releases/appcast.xml", publicAppcastUrl: "https://updates.example.com/api/v1/plugins/p/appcast.xml",
    objectStore: { bucket: "/s", objectPath: `releases/${version}/p-${version}.dmg`, artifactFileName: `p-${version}.dmg`, latestObjectPath: "releases/latest/p-x.dmg" },
    autoupdate: { publicDownloadUrl: url("zip"), buildNumber: o.build ?? 100 + i, edSignature: "c2ln", sizeBytes: 10 },
    publishedAt: { _seconds: 1_700_000_000 + i * 60, _nanoseconds: i },
    updatedAt: { _seconds: 1_700_000_000 + i * 60, _nanoseconds: 0 },
    ...(o.yanked ? { yanked: true as const, yankedAt: "2026-01-01T00:00:00.000Z", yankedReason: "broken" } : {}),
  } as ReleaseRecord;
}

const CONFIG = { pluginId: "p", displayName: "P", publisher: "Pub", appUrl: "https://updates.example.com", channel: "stable", timezone: "UTC", store: "file://./s" } as RelcastConfig;
const SHA = "ab".repeat(32);
const signingKey = (): SigningKey => parseSigningKey(newKey().seedBase64, "test key");

/** Python's cryptography checks the signature over the file with its signature value emptied, as relcast documents it. */
function pythonVerifies(file: string, publicKeyBase64: string): string {
  const script = [
    "import base64, re, sys",
    "from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey",
    "text = open(sys.argv[1], 'rb').read()",
    "head, rest = text.split(b'\\n', 1)",
    "m = re.fullmatch(rb'(.*),\"signature\":\"([A-Za-z0-9+/=]*)\",\"entries\":\\[', head)",
    "signed = m.group(1) + b',\"signature\":\"\",\"entries\":[\\n' + rest",
    "try:",
    "    Ed25519PublicKey.from_public_bytes(base64.b64decode(sys.argv[2])).verify(base64.b64decode(m.group(2)), signed); print('good')",
    "except Exception as e: print('bad', type(e).__name__)",
  ].join("\n");
  return execFileSync("python3", ["-c", script, file, publicKeyBase64], { encoding: "utf8" }).trim();
}

describe("the catalog index is trusted only when the run's release key signed it", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-index-sig-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A store with a catalog of `records` and its ETag. */
  async function storeWith(name: string, records: ReleaseRecord[]) {
    const store = createFolderStore(path.join(dir, name));
    const bytes = Buffer.from(serializeCatalog(buildCatalog("p", records)));
    const etag = (await store.put("releases/catalog.json", bytes, { contentType: "application/json" })).etag;
    return { store, bytes, etag, view: viewFromBytes("t", etag, bytes, 100) };
  }

  it("a publish writes the index signed (python cryptography agrees); one changed byte, another key or no signature is refused aloud", async () => {
    const key = signingKey();
    const { store, bytes } = await storeWith("signed", [record(1), record(2)]);
    const work = path.join(dir, "signed-work");
    await mkdir(work, { recursive: true });
    // A real publish of 1.0.3 carried out as planned: the index is stamped with the catalog's new ETag, then signed.
    const plan = await planFeeds(store, CONFIG, { kind: "add", record: record(3) }, work, 1, { key });
    expect(plan.writes.find((w) => w.key === CATALOG_INDEX_KEY)).toMatchObject({ needed: true, why: "index of the new catalog" });
    await applyWrites(applyTarget(store, () => {}), plan.writes);
    const file = path.join(dir, "signed", CATALOG_INDEX_KEY);
    const text = await readFile(file, "utf8");
    const read = readIndexText(text);
    if (!read.ok) throw new Error(read.why);
    expect(read.seal.publicKey).toBe(key.publicKeyBase64);
    expect(read.catalogEtag).toBe((await store.head("releases/catalog.json"))!.etag);
    expect(JSON.parse(text)).toMatchObject({ format: 4, publicKey: key.publicKeyBase64, count: 3 });
    expect(pythonVerifies(file, key.publicKeyBase64)).toBe("good");
    expect(pythonVerifies(file, signingKey().publicKeyBase64)).toBe("bad InvalidSignature");

    const warnings: string[] = [];
    const trust = (k: SigningKey) => ({ publicKey: k.publicKey, warn: (line: string) => warnings.push(line) });
    const etag = read.catalogEtag;
    expect(await readTrustedIndex(store, etag, 100, trust(key))).toMatchObject({ count: 3, catalogSha256: read.catalogSha256 });
    expect(warnings).toEqual([]);
    // Another ETag or appcast limit: stale, not suspect (no word).
    expect(await readTrustedIndex(store, '"other"', 100, trust(key))).toBeUndefined();
    expect(await readTrustedIndex(store, etag, 5, trust(key))).toBeUndefined();
    expect(warnings).toEqual([]);
    // The key was changed: the old index is not used, and the run says why.
    const other = signingKey();
    expect(await readTrustedIndex(store, etag, 100, trust(other))).toBeUndefined();
    expect(warnings.pop()).toMatch(new RegExp(`^not using .*catalog-index\\.json: it is signed by another key \\(public key ${key.publicKeyBase64.replace(/[+/]/g, "\\$&")}\\), not by this key .*reading the catalog in full instead`));
    // A row changed and the file re-signed by whoever does not hold the key (digest recomputed, signature copied): refused.
    const rows = read.view.entries.text.replace('"103"', '"50"');
    expect(rows).not.toBe(read.view.entries.text);
    const records = read.view.records.map((r) => (r.version === "1.0.3" ? { ...r, autoupdate: { ...r.autoupdate!, buildNumber: 50 } } : r));
    const forged = serializeCatalogIndex({ ...read.view, entries: CatalogEntries.fromText(rows)!, records }, 100, read.catalogSha256, key.publicKeyBase64)
      .replace('"signature":""', `"signature":${JSON.stringify(read.seal.signature)}`);
    expect(readIndexText(forged).ok).toBe(true);
    for (const [bad, why] of [
      [forged, "its signature does not verify"],
      // An old signed index re-labelled with today's ETag: the ETag is signed too.
      [text.replace(JSON.stringify(etag), JSON.stringify(`${etag.slice(0, -2)}x"`)), "its signature does not verify"],
      [serializeCatalogIndex(read.view, 100, read.catalogSha256, key.publicKeyBase64), "it is not signed"],
      [text.replace('"format":4', '"format":3'), "it is unsigned (format 3, written by an older relcast)"],
    ] as const) {
      await writeFile(file, bad);
      const labelled = readIndexText(bad).catalogEtag ?? etag;
      expect(await readTrustedIndex(store, labelled, 100, trust(key))).toBeUndefined();
      expect(warnings.pop()).toContain(why);
    }
    await writeFile(file, forged);
    expect(pythonVerifies(file, key.publicKeyBase64)).toBe("bad InvalidSignature");
    // The forged index changes nothing a run sees: the view is the catalog's, build 103 as published.
    const view = await readCatalogView(store, 100, trust(key));
    expect([...view!.entries].map((e) => e.build)).toEqual(["103", "102", "101"]);
    expect(warnings.pop()).toContain("its signature does not verify");
    expect(bytes.length).toBeGreaterThan(0);
  });

  it("after a key change the next run reads the catalog once and writes an index signed with the new key; a run without a key writes none", async () => {
    const oldKey = signingKey();
    const newer = signingKey();
    const { store, view, etag } = await storeWith("rotate", [record(1), record(2, { yanked: true })]);
    const signed = await signCatalogIndex(serializeCatalogIndex(view, 100, "0".repeat(64), oldKey.publicKeyBase64), oldKey);
    await store.put(CATALOG_INDEX_KEY, signed, { contentType: "application/json" });
    const work = path.join(dir, "rotate-work");
    await mkdir(work, { recursive: true });
    const warnings: string[] = [];
    const plan = await planFeeds(store, CONFIG, { kind: "yank-state", version: "1.0.2", marker: undefined }, work, 1, { key: newer, warn: (l) => warnings.push(l) });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("it is signed by another key");
    const keyless = await planFeeds(store, CONFIG, { kind: "yank-state", version: "1.0.2", marker: undefined }, work, 1, {});
    expect(keyless.writes.find((w) => w.key === CATALOG_INDEX_KEY)).toMatchObject({ needed: false, why: "not written: no signing key to sign it with" });
    await applyWrites(applyTarget(store, () => {}), plan.writes);
    const text = (await store.get(CATALOG_INDEX_KEY))!.body.toString("utf8");
    const read = readIndexText(text);
    if (!read.ok) throw new Error(read.why);
    expect(read.seal.publicKey).toBe(newer.publicKeyBase64);
    expect(read.catalogEtag).not.toBe(etag);
    expect(pythonVerifies(path.join(dir, "rotate", CATALOG_INDEX_KEY), newer.publicKeyBase64)).toBe("good");
    expect(await readTrustedIndex(store, read.catalogEtag, 100, { publicKey: newer.publicKey, warn: (l) => warnings.push(l) })).toMatchObject({ count: 2 });
    expect(warnings).toHaveLength(1);
  });
});
