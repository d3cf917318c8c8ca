import { execFileSync } from "node:child_process";

/**
 * A zip read by three readers that share no code with relcast or each other:
 * Info-ZIP `unzip -t` (tests every entry's CRC), Python's `zipfile`
 * (`testzip`, then the listing) and libarchive's `bsdtar -tvf` (the listing).
 * Each answers the entries it saw, so a test can compare them.
 */
export interface ReadBack {
  /** Python's view: name, size and compressed size of every entry, in order. */
  python: Array<{ name: string; size: number; compressed: number; offset: number }>;
  /** bsdtar's listing: name and size of every entry. */
  bsdtar: Array<{ name: string; size: number }>;
  /** Entries unzip -t tested ("OK" lines). */
  unzipOk: number;
}

const PY_TEST = `
import json, sys, zipfile, zlib
sources = json.loads(sys.argv[2])
only = json.loads(sys.argv[3])
with zipfile.ZipFile(sys.argv[1]) as z:
    if only:
        for name in only:
            with z.open(name) as f:
                while f.read(1 << 20):
                    pass
    else:
        bad = z.testzip()
        if bad is not None:
            sys.exit("testzip: bad entry " + bad)
    for name, path in sources.items():
        crc = 0
        with open(path, "rb") as f:
            while True:
                block = f.read(1 << 22)
                if not block:
                    break
                crc = zlib.crc32(block, crc)
        if z.getinfo(name).CRC != crc:
            sys.exit("CRC of " + name + " is not the CRC of " + path)
    print(json.dumps([[i.filename, i.file_size, i.compress_size, i.header_offset] for i in z.infolist()]))
`;

const MAX_BUFFER = 1 << 30;

/**
 * `sources` maps entry names to the files they were made from: Python checks
 * each entry's CRC-32 against the file's own. `only` limits the data read
 * (unzip -t and Python's reads, which check each CRC) to those entries; every
 * reader still parses the whole central directory and end records.
 */
export function readWithThreeReaders(zip: string, sources: Record<string, string> = {}, only: string[] = []): ReadBack {
  const unzip = execFileSync("unzip", ["-t", zip, ...only], { encoding: "utf8", maxBuffer: MAX_BUFFER });
  if (!/No errors detected in /.test(unzip)) throw new Error(`unzip -t ${zip}: ${unzip.slice(-2000)}`);
  const unzipOk = unzip.split("\n").filter((line) => /^\s+testing: .*\s+OK$/.test(line)).length;
  const python = (JSON.parse(execFileSync("python3", ["-c", PY_TEST, zip, JSON.stringify(sources), JSON.stringify(only)], { encoding: "utf8", maxBuffer: MAX_BUFFER })) as Array<[string, number, number, number]>).map(
    ([name, size, compressed, offset]) => ({ name, size, compressed, offset }),
  );
  // bsdtar -tv prints ls -l style lines: mode, links, owner, group, size, date (3 fields), name; a link adds " -> target".
  const bsdtar = execFileSync("bsdtar", ["-tvf", zip], { encoding: "utf8", maxBuffer: MAX_BUFFER })
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const fields = line.trim().split(/\s+/);
      const name = fields.slice(8).join(" ").replace(/ -> .*$/, "");
      return { name: fields[0]!.startsWith("d") && !name.endsWith("/") ? `${name}/` : name, size: Number(fields[4]) };
    });
  return { python, bsdtar, unzipOk };
}
