// The new zip's central directory in table form (zip-entry-table.ts) and the tree laid out from it (zip-layout.ts):
// each tree entry's zip entry (name, method, CRC-32, sizes, local header offset) must be the one Python's zipfile
// reads from the same zip, found by tree index and by path, with folders the zip only implies having none; and
// every refusal of the layout (unsafe names, duplicates, entries below a link or a file, one top folder, link
// target size, an empty zip) keeps its message, now that no Map of entries backs it. Zips are written by Python.
import { execFileSync } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { openZipBundleTree } from "../../../src/sparkle/delta/zip-bundle-tree.js";
import { layOutZip } from "../../../src/sparkle/delta/zip-layout.js";
import { ZipEntryTable } from "../../../src/sparkle/delta/zip-entry-table.js";

// Zips of entries given as [name, st_mode, data, deflate?], all in one run; prints each entry's fields as zipfile reads them.
const PY_ZIPS = `
import sys, json, zipfile
out = []
for file, spec in json.loads(sys.stdin.read()):
    with zipfile.ZipFile(file, "w") as z:
        for name, mode, data, deflate in spec:
            info = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
            info.create_system = 3
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
            z.writestr(info, data)
    out.append([[i.filename, i.compress_type, i.CRC, i.compress_size, i.file_size, i.header_offset] for i in zipfile.ZipFile(file).infolist()])
print(json.dumps(out))
`;

type Spec = Array<[string, number, string, boolean?]>;
type Infos = Array<[string, number, number, number, number, number]>;

function pyZips(dir: string, specs: Spec[]): Array<{ file: string; infos: Infos }> {
  const jobs = specs.map((spec, i) => [path.join(dir, `z${i}.zip`), spec.map(([n, m, d, z]) => [n, m, d, z ?? false])]);
  const infos: Infos[] = JSON.parse(execFileSync("python3", ["-W", "ignore", "-c", PY_ZIPS], { input: JSON.stringify(jobs), encoding: "utf8" }));
  return infos.map((entries, i) => ({ file: jobs[i]![0] as string, infos: entries }));
}

const FILE = 0o100644;
const EXEC = 0o100755;
const DIR = 0o40755;
const LINK = 0o120755;

const MAIN: Spec = [
  ["Demo.bundle/", DIR, ""],
  ["Demo.bundle/Contents/", 0o40700, ""],
  ["Demo.bundle/Contents/Info.plist", FILE, "<plist/>\n".repeat(50), true],
  // Its folders (Resources, Resources/deep) are only implied by this name.
  ["Demo.bundle/Contents/Resources/deep/caf\u00e9.txt", FILE, "caf\u00e9\n"],
  ["Demo.bundle/Contents/MacOS/Demo", EXEC, "binary".repeat(300), true],
  ["Demo.bundle/Contents/Current", LINK, "MacOS"],
];

const refusals: Array<[string, Spec, RegExp]> = [
  ["an absolute name", [["/etc/", DIR, ""]], /unsafe entry name "\/etc\/"/],
  ["a name with ..", [["A.bundle/", DIR, ""], ["A.bundle/../x", FILE, "x"]], /unsafe entry name "A\.bundle\/\.\.\/x"/],
  ["a backslash", [["A.bundle/", DIR, ""], ["A.bundle/a\\b", FILE, "x"]], /unsafe entry name/],
  ["two top folders", [["A.bundle/x", FILE, "x"], ["B.bundle/y", FILE, "y"]], /more than one top-level entry \(A\.bundle, B\.bundle\)/],
  ["a top-level file", [["A.bundle", FILE, "x"]], /the top-level entry A\.bundle is not a folder/],
  ["a duplicate file", [["A.bundle/x", FILE, "1"], ["A.bundle/x", FILE, "2"]], /duplicate entry A\.bundle\/x/],
  ["a duplicate folder", [["A.bundle/d/", DIR, ""], ["A.bundle/d/", DIR, ""]], /duplicate entry A\.bundle\/d/],
  ["a file where a folder was implied", [["A.bundle/d/x", FILE, "1"], ["A.bundle/d", FILE, "2"]], /duplicate entry A\.bundle\/d\./],
  ["an entry below a file", [["A.bundle/f", FILE, "1"], ["A.bundle/f/x", FILE, "2"]], /A\.bundle\/f\/x lies below the file f\./],
  ["an entry below a symlink", [["A.bundle/l", LINK, "elsewhere"], ["A.bundle/l/deep/x", FILE, "2"]], /A\.bundle\/l\/deep\/x lies below the symlink l\./],
  ["a link target over 4096 bytes", [["A.bundle/l", LINK, "t".repeat(4097)]], /symlink A\.bundle\/l has a 4097-byte target/],
  // The first problem in the listing's order is the one named, as the unpacker would meet it.
  ["a duplicate before an unsafe name", [["A.bundle/x", FILE, "1"], ["A.bundle/x", FILE, "2"], ["A.bundle/../y", FILE, "3"]], /duplicate entry A\.bundle\/x\./],
  ["a file below a file before a duplicate", [["A.bundle/f", FILE, "1"], ["A.bundle/f/x", FILE, "2"], ["A.bundle/f", FILE, "3"]], /A\.bundle\/f\/x lies below the file f\./],
];

let zips: Array<{ file: string; infos: Infos }>;

beforeAll(async () => {
  zips = pyZips(await mkdtemp(path.join(os.tmpdir(), "zip-directory-table-")), [MAIN, ...refusals.map(([, spec]) => spec)]);
});

describe("the new zip's directory in table form", () => {
  it("gives each tree entry the zip entry Python reads, by index and by path; implied folders have none", async () => {
    const { file, infos } = zips[0]!;
    const tree = await openZipBundleTree(file);
    try {
      const byName = new Map(infos.map(([name, method, crc32, compressedSize, size, localHeaderOffset]) => [name, { name, method, crc32, compressedSize, size, localHeaderOffset }]));
      expect(tree.entries.map((e) => e.rel)).toEqual(["/Contents", "/Contents/Current", "/Contents/Info.plist", "/Contents/MacOS", "/Contents/MacOS/Demo", "/Contents/Resources", "/Contents/Resources/deep", "/Contents/Resources/deep/caf\u00e9.txt"]);
      const seen: string[] = [];
      tree.entries.forEach((e, i) => {
        const raw = tree.raw.at(i);
        const implied = ["/Contents/MacOS", "/Contents/Resources", "/Contents/Resources/deep"].includes(e.rel);
        if (implied) {
          expect(raw, e.rel).toBeUndefined();
          expect(e.perms).toBe(0o755);
          return;
        }
        expect(raw, e.rel).toEqual(byName.get(`Demo.bundle${e.rel}${e.kind === "dir" ? "/" : ""}`));
        expect(tree.raw.get(e.rel)).toEqual(raw);
        seen.push(raw!.name);
      });
      expect(tree.entries.find((e) => e.rel === "/Contents")!.perms).toBe(0o700);
      expect(tree.raw.get("/Contents/Missing")).toBeUndefined();
      expect(tree.raw.at(tree.entries.length)).toBeUndefined();
      // Iterated in the tree's order over the entries the zip lists (not its top folder).
      expect([...tree.raw].map(([rel, r]) => [rel, r.name])).toEqual(seen.map((name) => [name.replace(/^Demo\.bundle/, "").replace(/\/$/, ""), name]));
      // The bytes behind the places are the entries' own (size and CRC-32 checked as they are read).
      const info = tree.entries.find((e) => e.rel === "/Contents/Info.plist")!;
      expect((await tree.source.readFile(info)).toString()).toBe("<plist/>\n".repeat(50));
    } finally {
      await tree.close();
    }
  });

  it("lays out a table it is handed: an implied folder later given its own entry takes that entry (mode and index)", () => {
    const table = new ZipEntryTable();
    const add = (name: string, unixMode: number, size = 0) => table.add(name, { unixMode, method: 0, crc32: 0, compressedSize: size, size, localHeaderOffset: 0 });
    add("A.bundle/b/c.txt", FILE, 3);
    add("A.bundle/b/", 0o40700);
    add("A.bundle/a.txt", FILE, 1);
    const layout = layOutZip("t.zip", table);
    expect(layout.top).toBe("A.bundle");
    expect(layout.entries.map((e) => [e.rel, e.perms])).toEqual([["/a.txt", 0o644], ["/b", 0o700], ["/b/c.txt", 0o644]]);
    // The folder implied by c.txt, then given its own entry, is that entry's (index 1).
    expect([...layout.zipIndex]).toEqual([2, 1, 0]);
    expect(table.nameBytes).toBe(Buffer.byteLength("A.bundle/b/c.txtA.bundle/b/A.bundle/a.txt"));
  });

  refusals.forEach(([what, , message], i) => {
    it(`refuses ${what}, saying so`, async () => {
      const { file } = zips[i + 1]!;
      await expect(openZipBundleTree(file)).rejects.toMatchObject({ code: "E_INPUT", message: expect.stringMatching(message) });
    });
  });

  it("refuses an empty zip", () => {
    expect(() => layOutZip("e.zip", new ZipEntryTable())).toThrow(/Cannot read e\.zip as a bundle: the zip is empty/);
  });
});
