import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReleaseRecord } from "../../../src/domain/record-schema.js";
import { treeManifestKey, versionedKey, zipFileName } from "../../../src/domain/release-layout.js";
import { applyDeltaToTree } from "../../../src/sparkle/delta/delta-apply-tree.js";
import { createDeltaFromTrees } from "../../../src/sparkle/delta/delta-create.js";
import { parseTreeManifest, serializeTreeManifest, treeManifestOf, type TreeManifest } from "../../../src/sparkle/delta/tree-manifest.js";
import { treeHashOf } from "../../../src/sparkle/delta/tree-hash.js";
import { openZipBundleTree, type ZipBundleTree } from "../../../src/sparkle/delta/zip-bundle-tree.js";
import { openOldTree } from "../../../src/steps/deltas/old-tree.js";
import { zipBundle } from "../../../src/steps/zip/reproducible-zip.js";
import type { FeedRecord } from "../../../src/domain/appcast-selection.js";
import { treeManifestProblems } from "../../../src/verify/tree-manifest-check.js";
import { createFolderStore } from "../../../src/store/folder-store.js";
import type { ObjectStore } from "../../../src/store/object-store.js";
import { makeDeltaTrees } from "../../helpers/delta-trees.js";

let dir: string;
let store: ObjectStore;
let newTree: ZipBundleTree;
let honest: TreeManifest;
let record: ReleaseRecord;
let work = 0;

/** A manifest edited and made consistent again (its tree hash recomputed), as a careful forger would. */
function forged(edit: (m: TreeManifest) => void): Buffer {
  const m = structuredClone(honest);
  edit(m);
  const hashes = new Map(m.entries.flatMap((e) => (e.kind === "dir" ? [] : [[e.path, Buffer.from(e.sha1, "hex")] as const])));
  m.treeHash = treeHashOf(
    m.entries.map((e) => ({ rel: e.path, kind: e.kind, perms: e.mode })),
    (e) => hashes.get(e.rel)!,
  ).toString("hex");
  return serializeTreeManifest(m);
}

async function open(manifest: Buffer) {
  await store.put(treeManifestKey("1.0.0"), manifest, { contentType: "application/json" });
  const warnings: string[] = [];
  const workDir = await mkdtemp(path.join(dir, `work-${work++}-`));
  const tree = await openOldTree(store, record, newTree, workDir, 16 << 20, (line) => warnings.push(line));
  return { tree, warnings };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "relcast-old-tree-"));
  const { oldRoot, newRoot } = await makeDeltaTrees(dir);
  const oldZip = path.join(dir, "old.zip");
  const made = await zipBundle(oldRoot, oldZip);
  await zipBundle(newRoot, path.join(dir, "new.zip"));
  newTree = await openZipBundleTree(path.join(dir, "new.zip"));
  const oldTree = await openZipBundleTree(oldZip);
  honest = (await treeManifestOf(oldTree, "1.0.0", made))!;
  await oldTree.close();
  store = createFolderStore(path.join(dir, "store"));
  await store.put(versionedKey("1.0.0", zipFileName("demo", "1.0.0")), { file: oldZip }, { contentType: "application/zip" });
  record = { version: "1.0.0", pluginId: "demo", autoupdate: { sha256: made.sha256, sizeBytes: made.sizeBytes } } as unknown as ReleaseRecord;
});
afterAll(async () => {
  await newTree?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("an old release's tree from its manifest, bound to its zip", () => {
  it("is used when the manifest tells the truth", async () => {
    const { tree, warnings } = await open(serializeTreeManifest(honest));
    await tree.close();
    expect(warnings).toEqual([]);
    expect(tree.describe()).toMatch(/from its manifest/);
  });

  it("falls back to the zip when an unchanged file's SHA-1 is forged to the new release's (a delta from it would miss that file)", async () => {
    const [rel, newHash] = [...newTree.fileHashes].find(([r, h]) => {
      const e = honest.entries.find((x) => x.path === r);
      return e?.kind === "file" && e.sha1 !== h.toString("hex");
    })!;
    const { tree, warnings } = await open(
      forged((m) => {
        const e = m.entries.find((x) => x.path === rel);
        if (e?.kind === "file") e.sha1 = newHash.toString("hex");
      }),
    );
    try {
      expect(warnings.join("\n")).toMatch(/another CRC-32 or size|SHA-1 differs/);
      expect(tree.describe()).toMatch(/read whole/);
      // The delta made from the fallback tree applies back to the real old tree.
      const delta = path.join(dir, "fallback.delta");
      await createDeltaFromTrees(tree, newTree, delta, { compression: "lzma" });
      const applied = await applyDeltaToTree(tree, delta);
      expect(applied.afterHash).toBe(newTree.hash.toString("hex"));
      expect(tree.hash.toString("hex")).toBe(honest.treeHash);
    } finally {
      await tree.close();
    }
  });

  it("falls back when a zip offset, CRC-32 or size disagrees with the zip's central directory (no read past the zip's end)", async () => {
    const file = honest.entries.find((e) => e.kind === "file")!.path;
    const edits: Array<(e: Extract<TreeManifest["entries"][number], { kind: "file" }>) => void> = [
      (e) => (e.zip.offset = 2 ** 53 - 100),
      (e) => (e.zip.offset += 1),
      (e) => (e.zip.crc32 = (e.zip.crc32 + 1) >>> 0),
      (e) => (e.zip.compressedSize += 1),
    ];
    for (const edit of edits) {
      const { tree, warnings } = await open(
        forged((m) => {
          const e = m.entries.find((x) => x.path === file);
          if (e?.kind === "file") edit(e);
        }),
      );
      await tree.close();
      expect(tree.describe()).toMatch(/read whole/);
      expect(warnings.join("\n")).toMatch(/central directory|past the end/);
    }
  });

  it("falls back when a link target is forged (its hash and the tree hash made consistent)", async () => {
    const { tree, warnings } = await open(
      forged((m) => {
        const e = m.entries.find((x) => x.kind === "symlink");
        if (e?.kind !== "symlink") throw new Error("test bundle changed");
        e.target = e.target.slice(0, -1) + (e.target.endsWith("x") ? "y" : "x"); // same length: only the CRC-32 can tell
        e.sha1 = createHash("sha1").update(e.target).digest("hex");
      }),
    );
    await tree.close();
    expect(tree.describe()).toMatch(/read whole/);
    expect(warnings.join("\n")).toMatch(/central directory|CRC-32/);
  });

  it("refuses, unread, a manifest larger than one for its zip can be", async () => {
    const big = Buffer.concat([serializeTreeManifest(honest).subarray(0, -1), Buffer.alloc(4 << 20, " "), Buffer.from("\n")]);
    expect(() => parseTreeManifest(big, "t.json", 1 << 20)).toThrow(/more than a manifest/);
    const { tree, warnings } = await open(big);
    await tree.close();
    expect(tree.describe()).toMatch(/read whole/);
    expect(warnings.join("\n")).toMatch(/it was not read/);
    // verify reports it as a problem, also unread; the honest manifest has none.
    expect((await treeManifestProblems(store, "demo", record as unknown as FeedRecord)).join("\n")).toMatch(/it was not read/);
    await store.put(treeManifestKey("1.0.0"), serializeTreeManifest(honest), { contentType: "application/json" });
    expect(await treeManifestProblems(store, "demo", record as unknown as FeedRecord)).toEqual([]);
  });
});
