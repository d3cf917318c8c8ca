import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseTreeManifest, serializeTreeManifest, type TreeManifest } from "../../../src/sparkle/delta/tree-manifest.js";
import { treeHashOf } from "../../../src/sparkle/delta/tree-hash.js";

const sha1 = (text: string) => createHash("sha1").update(text).digest("hex");

/** A small manifest that holds up (tree hash from its own entries), with entries of every kind. */
function manifest(): TreeManifest {
  const place = (name: string, offset: number) => ({ name, offset, method: 0 as const, crc32: 1, compressedSize: 5 });
  const entries: TreeManifest["entries"] = [
    { path: "/Contents", kind: "dir", mode: 0o755 },
    { path: "/Contents/Info.plist", kind: "file", mode: 0o644, size: 5, sha1: sha1("plist"), zip: place("X.bundle/Contents/Info.plist", 100) },
    { path: "/Contents/a,\u00e9", kind: "file", mode: 0o755, size: 5, sha1: sha1("comma"), zip: place("X.bundle/Contents/a,\u00e9", 200) },
    { path: "/Contents/link", kind: "symlink", mode: 0o755, target: "Info.plist", sha1: sha1("Info.plist"), zip: place("X.bundle/Contents/link", 300) },
  ];
  const hashes = new Map(entries.flatMap((e) => (e.kind === "dir" ? [] : [[e.path, Buffer.from(e.sha1, "hex")] as const])));
  const treeHash = treeHashOf(entries.map((e) => ({ rel: e.path, kind: e.kind, perms: e.mode })), (e) => hashes.get(e.rel)!).toString("hex");
  return { format: "relcast-tree-manifest/1", version: "1.0.0", zip: { sha256: "ab".repeat(32), sizeBytes: 10_000 }, treeHash, entries };
}

describe("parseTreeManifest on relcast's one-entry-a-line layout", () => {
  it("reads it to the very manifest and tree that the same JSON in any other layout gives", () => {
    const m = manifest();
    const canonical = parseTreeManifest(serializeTreeManifest(m), "t.json");
    expect(canonical.manifest).toEqual(m);
    for (const other of [JSON.stringify(m), JSON.stringify(m, null, 1), JSON.stringify(m, null, 2)]) {
      const parsed = parseTreeManifest(Buffer.from(other), "t.json");
      expect(parsed.manifest).toEqual(canonical.manifest);
      expect(parsed.tree.hash.equals(canonical.tree.hash)).toBe(true);
      expect(parsed.tree.entries).toEqual(canonical.tree.entries);
    }
    const empty = { ...m, entries: [], treeHash: createHash("sha1").digest("hex") };
    expect(parseTreeManifest(serializeTreeManifest(empty), "t.json").manifest).toEqual(empty);
  });

  it("refuses a bad entry line naming its place, and text that only looks like the layout", () => {
    const text = serializeTreeManifest(manifest()).toString();
    const extraKey = text.replace('"kind":"file","mode":420', '"kind":"file","extra":1,"mode":420');
    expect(() => parseTreeManifest(Buffer.from(extraKey), "t.json")).toThrow(/not a valid tree manifest: entries\.1: Unrecognized key/);
    // An entry split over two lines is not the layout: the whole text is parsed instead, to the same result.
    const split = text.replace('"kind":"file","mode":420', '"kind":"file",\n"mode":420');
    expect(parseTreeManifest(Buffer.from(split), "t.json").manifest).toEqual(manifest());
    // The entries marker inside a nested object of the head: never taken for the manifest's own list.
    const nested = text.replace('"sizeBytes": 10000\n  },', '"sizeBytes": 10000,\n  "entries": [\n');
    expect(() => parseTreeManifest(Buffer.from(nested), "t.json")).toThrow(/not a valid tree manifest/);
    expect(() => parseTreeManifest(Buffer.from(text.replace(",\n    {", ",\n,\n    {")), "t.json")).toThrow(/not JSON/);
    expect(() => parseTreeManifest(Buffer.from(text.slice(0, -3)), "t.json")).toThrow(/not JSON/);
  });

  it("refuses a link target the zip rules refuse (NUL, a lone surrogate: text that is no UTF-8 link), as the zip's layout does", () => {
    for (const target of ["Info\u0000.plist", "Info\ud800.plist"]) {
      const m = manifest();
      const link = m.entries[3]!;
      if (link.kind !== "symlink") throw new Error("the fixture's fourth entry is its link");
      link.target = target;
      expect(() => parseTreeManifest(serializeTreeManifest(m), "t.json"), JSON.stringify(target)).toThrow(/not a valid tree manifest: entries\.3\.target: a link target must be UTF-8 text without NUL/);
    }
  });
});
