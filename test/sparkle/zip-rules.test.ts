import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { Readable } from "node:stream";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { readZipListing } from "../../src/sparkle/zip-listing.js";
import { zipRuleProblems } from "../../src/sparkle/zip-rules.js";

/**
 * Zips written by Python's zipfile (an independent producer), entry by
 * entry: "d" folder, "f" file, "l" symlink (content = target), as a Unix
 * zip would store them.
 */
const PY_ZIP = `
import json, sys, zipfile
for out, entries in json.loads(sys.stdin.read()).items():
    with zipfile.ZipFile(out, "w") as z:
        for kind, name, data in entries:
            info = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
            info.create_system = 3
            mode = {"d": 0o40755, "f": 0o100644, "l": 0o120755}[kind]
            info.external_attr = (mode << 16) | (0x10 if kind == "d" else 0)
            z.writestr(info, data)
`;

type Spec = Array<["d" | "f" | "l", string, string]>;

const GOOD: Spec = [
  ["d", "P.bundle/", ""],
  ["d", "P.bundle/Contents/", ""],
  ["f", "P.bundle/Contents/Info.plist", "<plist/>"],
  ["d", "P.bundle/Contents/Frameworks/B.framework/", ""],
  ["d", "P.bundle/Contents/Frameworks/B.framework/Versions/A/", ""],
  ["f", "P.bundle/Contents/Frameworks/B.framework/Versions/A/B", "bin"],
  ["l", "P.bundle/Contents/Frameworks/B.framework/Versions/Current", "A"],
  ["l", "P.bundle/Contents/Frameworks/B.framework/B", "Versions/Current/B"],
];

const BAD: Array<[string, Spec, RegExp]> = [
  ["two top-level bundles", [...GOOD, ["d", "Q.bundle/", ""]], /exactly one top-level bundle, found 2: P\.bundle, Q\.bundle/],
  ["a top-level file", [["f", "P.bundle", "x"]], /top-level entry P\.bundle is not a folder/],
  ["no Info.plist", GOOD.filter(([, name]) => !name.endsWith("Info.plist")), /P\.bundle has no Contents\/Info\.plist/],
  ["__MACOSX debris", [...GOOD.slice(0, 3), ["f", "P.bundle/__MACOSX/._x", "x"]], /__MACOSX/],
  ["an AppleDouble file", [...GOOD, ["f", "P.bundle/Contents/._Info.plist", "x"]], /AppleDouble file in the zip: P\.bundle\/Contents\/\._Info\.plist/],
  ["an absolute symlink", [...GOOD, ["l", "P.bundle/Contents/Resources", "/etc"]], /points to the absolute path \/etc/],
  ["a symlink leaving the bundle", [...GOOD, ["l", "P.bundle/Contents/x", "../../other"]], /P\.bundle\/Contents\/x -> \.\.\/\.\.\/other points outside P\.bundle/],
  // The one name rule (core/entry-name-rule.ts) the zip readers apply: was listed with "\\" turned into "/" by yauzl.
  ["a name with a backslash", [...GOOD, ["f", "P.bundle/Contents/Resources/x\\y", "hi"]], /entry name "P\.bundle\/Contents\/Resources\/x\\\\y" "x\\\\y" holds a backslash/],
  ["a name with ..", [...GOOD, ["f", "P.bundle/Contents/../x", "hi"]], /entry name "P\.bundle\/Contents\/\.\.\/x" "\.\." is "\.\.", not a name/],
  // The link rule with what the zip holds: a trailing "/" naming a file (a link swapped after preflight), a target too long for macOS.
  ["a link ending in / that names a file", [...GOOD, ["l", "P.bundle/Contents/l", "Info.plist/"]], /in P\.bundle: link \/Contents\/l points at "Info\.plist\/", which ends in "\/" \(a folder\) but, read as text, names the file \/Contents\/Info\.plist/],
  ["a link target of 1024 bytes", [...GOOD, ["l", "P.bundle/Contents/l", `${"./".repeat(507)}Info.plist`]], /link \/Contents\/l has a 1024-byte target, longer than the 1023 bytes macOS can make/],
  // Two entries one Mac unpacks to one file: a bundle changed between preflight and the zip, or a zip edited in the store.
  ["two names differing in case", [...GOOD, ["f", "P.bundle/Contents/README.txt", "a"], ["f", "P.bundle/Contents/readme.TXT", "b"]], /entries "P\.bundle\/Contents\/README\.txt" and "P\.bundle\/Contents\/readme\.TXT" are one name on macOS/],
  ["NFC and NFD spellings of one name", [...GOOD, ["f", "P.bundle/Contents/caf\u00e9", "a"], ["f", "P.bundle/Contents/cafe\u0301", "b"]], /entries "P\.bundle\/Contents\/caf\u00e9" and "P\.bundle\/Contents\/cafe\u0301" are one name on macOS/],
  ["folders differing in case", [...GOOD, ["d", "P.bundle/Contents/Res/", ""], ["d", "P.bundle/Contents/res/", ""]], /entries "P\.bundle\/Contents\/Res" and "P\.bundle\/Contents\/res\/" are one name on macOS/],
  ["a flattened Versions/Current", GOOD.map(([k, name, d]) => (name.endsWith("Current") ? ["d", `${name}/`, ""] : [k, name, d]) as Spec[number]), /Versions\/Current is a dir, not a symlink/],
  ["a flattened framework binary", GOOD.map(([k, name, d]) => (name.endsWith("B.framework/B") ? ["f", name, "bin"] : [k, name, d]) as Spec[number]), /B\.framework\/B is a file at the top of a versioned framework/],
];

describe("zip rules (on zips Python's zipfile wrote)", () => {
  const file = (name: string) => path.join(dir, `${name.replace(/\W+/g, "-")}.zip`);
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-ziprules-"));
    const all = Object.fromEntries([["good", GOOD] as const, ...BAD.map(([name, spec]) => [name, spec] as const)].map(([name, spec]) => [file(name), spec]));
    execFileSync("python3", ["-c", PY_ZIP], { input: JSON.stringify(all) });
  });

  async function problemsOf(name: string): Promise<string[]> {
    return zipRuleProblems((await readZipListing(file(name))).entries);
  }

  it("accepts one bundle with Info.plist and a framework whose aliases are symlinks", async () => {
    expect(await problemsOf("good")).toEqual([]);
  });

  it("reads symlink targets and wanted files", async () => {
    const listing = await readZipListing(file("good"), (name) => name.endsWith("Info.plist"));
    expect(listing.entries.find((e) => e.name.endsWith("Versions/Current"))).toMatchObject({ kind: "symlink", target: "A" });
    expect(listing.files.get("P.bundle/Contents/Info.plist")?.toString()).toBe("<plist/>");
  });

  it("lists the same entries and files when the zip is read by ranges, fetching only what it needs", async () => {
    const bytes = await readFile(file("good"));
    const asked: Array<[number, number]> = [];
    const source = {
      size: bytes.length,
      openRange: async (start: number, end: number) => {
        asked.push([start, end]);
        return Readable.from([bytes.subarray(start, end)]);
      },
    };
    const wanted = (name: string) => name.endsWith("Info.plist");
    const byRanges = await readZipListing(source, wanted);
    const byFile = await readZipListing(file("good"), wanted);
    expect(byRanges.entries).toEqual(byFile.entries);
    expect([...byRanges.files]).toEqual([...byFile.files]);
    // yauzl reads each central directory record separately; the reader fetches whole blocks instead.
    expect(asked.length).toBeLessThanOrEqual(2);
    await expect(readZipListing({ size: bytes.length, openRange: async () => Readable.from([Buffer.alloc(0)]) })).rejects.toThrow();
  });

  it("accepts a link ending in / that names a folder, and one of 1023 bytes", async () => {
    const ok: Spec = [...GOOD, ["l", "P.bundle/Contents/r", "Frameworks/"], ["l", "P.bundle/Contents/l", `${"./".repeat(505)}.//Info.plist`]];
    const out = path.join(dir, "ok-links.zip");
    execFileSync("python3", ["-c", PY_ZIP], { input: JSON.stringify({ [out]: ok }) });
    expect(zipRuleProblems((await readZipListing(out)).entries)).toEqual([]);
  });

  it("refuses a name that is not UTF-8 (written without the UTF-8 flag), showing its bytes, and still lists the zip", async () => {
    const out = path.join(dir, "latin1.zip");
    execFileSync("python3", ["-c", PY_ZIP], { input: JSON.stringify({ [out]: [...GOOD, ["f", "P.bundle/Contents/cafeX", "a"]] }) });
    const bytes = await readFile(out);
    await writeFile(out, Buffer.from(bytes.toString("latin1").replaceAll("cafeX", "caf\xe9X"), "latin1"));
    const listing = await readZipListing(out);
    expect(listing.entries.find((e) => e.name.includes("caf"))).toMatchObject({ name: "P.bundle/Contents/caf\\xe9X", nameNotUtf8: true });
    expect(zipRuleProblems(listing.entries)).toEqual(['entry name "P.bundle/Contents/caf\\\\xe9X" is not valid UTF-8: rename it in the bundle']);
  });

  it.each(BAD)("refuses %s", async (name, _spec, message) => {
    const problems = await problemsOf(name);
    expect(problems.join("\n")).toMatch(message);
  });
});
