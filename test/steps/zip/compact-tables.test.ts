import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { zipBundle, type ZipResult } from "../../../src/steps/zip/reproducible-zip.js";

// Names whose UTF-16 order and UTF-8 byte order differ (U+FF21 sorts before U+1F600 in UTF-16, after it in
// bytes), "a.b" against the folder "a" (a walk puts "a/..." first), a decomposed accent, CR, spaces, and an
// empty folder: the compact tables (one name pool, typed columns, hashes found by binary search) must give the
// central directory and the content hashes the object-per-entry code gave, which Python reads independently.
const FILES: Record<string, string> = {
  "Contents/Info.plist": "<plist/>\n",
  "Contents/Resources/\uFF21.txt": "fullwidth A\n",
  "Contents/Resources/\u{1F600}.txt": "emoji\n",
  "Contents/Resources/a.b": "dot\n",
  "Contents/Resources/a/b": "slash\n",
  "Contents/Resources/a-b": "dash\n",
  "Contents/Resources/e\u0301t\u00e9 with space.txt": "accents\n",
  "Contents/Resources/Icon\r": "",
};

const PY = `
import hashlib, json, stat, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
out = []
for i in z.infolist():
    mode = i.external_attr >> 16
    data = z.read(i)
    out.append({"name": i.filename, "crc": i.CRC, "size": i.file_size, "mode": mode,
                "sha1": None if stat.S_ISDIR(mode) else hashlib.sha1(data).hexdigest()})
print(json.dumps(out))
`;

let dir: string;
let result: ZipResult;
let python: Array<{ name: string; crc: number; size: number; mode: number; sha1: string | null }>;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "relcast-compact-"));
  const bundle = path.join(dir, "Odd.bundle");
  for (const [rel, text] of Object.entries(FILES)) {
    await mkdir(path.dirname(path.join(bundle, rel)), { recursive: true });
    await writeFile(path.join(bundle, rel), text);
  }
  await mkdir(path.join(bundle, "Contents", "Empty"), { recursive: true });
  await symlink("a.b", path.join(bundle, "Contents", "Resources", "link"));
  await symlink("\u{1F600}.txt", path.join(bundle, "Contents", "Resources", "z-link"));
  result = await zipBundle(bundle, path.join(dir, "odd.zip"), { workers: false });
  python = JSON.parse(execFileSync("python3", ["-c", PY, result.file], { encoding: "utf8" }));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the zip step's compact tables", () => {
  it("write the central directory in walk order: each folder's names byte-wise, a folder's entries right after it", () => {
    const names = python.map((e) => e.name);
    const walk = (prefix: string): string[] => {
      const here = names.filter((n) => n.startsWith(prefix) && n !== prefix && !n.slice(prefix.length).replace(/\/$/, "").includes("/"));
      here.sort((a, b) => Buffer.compare(Buffer.from(a.slice(prefix.length).replace(/\/$/, "")), Buffer.from(b.slice(prefix.length).replace(/\/$/, ""))));
      return here.flatMap((n) => (n.endsWith("/") ? [n, ...walk(n)] : [n]));
    };
    expect(names).toEqual(["Odd.bundle/", ...walk("Odd.bundle/")]);
    expect(names).toContain("Odd.bundle/Contents/Empty/");
    expect(result.entryCount).toBe(names.length);
    expect(python.find((e) => e.name === "Odd.bundle/Contents/Resources/link")!.mode & 0o170000).toBe(0o120000);
  });

  it("find every file's and link's SHA-1 by its name (as Python hashes the zipped bytes), and nothing for other names", () => {
    const hashed = python.filter((e) => e.sha1 !== null);
    expect(result.contentHashes.size).toBe(hashed.length);
    for (const e of hashed) expect([e.name, result.contentHashes.get(e.name)?.toString("hex")]).toEqual([e.name, e.sha1]);
    expect([...result.contentHashes.keys()]).toEqual(hashed.map((e) => e.name));
    for (const absent of ["Odd.bundle/", "Odd.bundle/Contents/Empty/", "Odd.bundle/Contents/Resources/a", "Odd.bundle/Contents/Resources/zz", "", "Other.bundle/x"]) {
      expect(result.contentHashes.get(absent)).toBeUndefined();
    }
  });

  it("hand out copies: changing a returned hash changes nothing kept", () => {
    const name = "Odd.bundle/Contents/Resources/a.b";
    const first = result.contentHashes.get(name)!;
    const kept = Buffer.from(first);
    first.fill(0);
    expect(result.contentHashes.get(name)!.equals(kept)).toBe(true);
  });
});
