// The 8 GiB / 100,000-file row of `npm run bench` (key `big`): a plugin that ships a model file over 4 GiB
// (ZIP64), zipped by relcast's zip step and by Info-ZIP `zip -r -y -q` (default level 6, like ours), one run a
// side (each takes minutes; the wall times dwarf the noise that several runs would average out), then one
// real `relcast publish` of the same bundle into an empty folder store for its peak RSS and per-step split.
// Needs about 2.1× the bundle's size of free disk (the bundle plus one zip at a time); its folder is
// removed when the row ends, failed or not, and with the bench's temp folder on Ctrl-C.
import { spawnSync } from "node:child_process";
import { statSync } from "node:fs";
import { mkdir, readFile, rm, statfs, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { makeBigBundle } from "./make-bundle.mjs";
import { stepSplit } from "./publish-vs-script.mjs";

const MiB = 1 << 20;
const GiB = 1 << 30;
const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The load average now: each side runs once, so the row says how busy the machine was around it. */
const load = () => os.loadavg().map((x) => x.toFixed(1)).join(" ");

/**
 * Time ≤ 1.0× Info-ZIP: the 400 MiB zip row holds the speed target (≤ 0.6×); this row checks that nothing
 * scales worse than Info-ZIP with entry count and size (ZIP64 records, 100,000 headers, the listing, a 4 GiB
 * file cut into chunks), where ours has two cores and Info-ZIP one. Memory: the issue's 300 MB for publishing
 * an 8 GiB bundle, on the zip step alone and on the whole publish.
 */
const TIME_LIMIT = 1.0;
/**
 * RELCAST_BENCH_BYTES_SCALE=0.04 shrinks the row's bytes (bundle, model file, disk image) but not its file
 * count: memory follows the entry count, so the RSS checks keep their meaning on a machine short of disk
 * or time (the time check against Info-ZIP then says less).
 */
const BYTES_SCALE = Number(process.env.RELCAST_BENCH_BYTES_SCALE ?? 1);
const RSS_LIMIT_MB = 300;

/** An independent reader's view of a zip (Python's zipfile): entry count, and the ZIP64 entry read whole (CRC checked). */
function pythonZipCheck(zip, hugeName) {
  const script = [
    "import sys, zipfile",
    "z = zipfile.ZipFile(sys.argv[1])",
    "infos = z.infolist()",
    "big = [i for i in infos if i.filename.endswith(sys.argv[2])][0]",
    "n = 0",
    "with z.open(big) as f:",
    "    while chunk := f.read(1 << 22): n += len(chunk)",
    "print(len(infos), big.file_size, n)",
  ].join("\n");
  const run = spawnSync("python3", ["-c", script, zip, hugeName], { encoding: "utf8" });
  if (run.status !== 0) return { ok: false, detail: run.stderr.trim().split("\n").at(-1) };
  const [entries, declared, read] = run.stdout.trim().split(" ").map(Number);
  return { ok: true, entries, declared, read };
}

/** kit: the bench's helpers (see bench.mjs). */
export async function benchBig(kit) {
  const { tmp, cli, SCALE, measure, round, fmtBytes, writeBigFile, keyPair, writeConfig, row, lastRow } = kit;
  const root = path.join(tmp, "big");
  if (!(BYTES_SCALE > 0 && BYTES_SCALE <= 1)) throw new Error(`RELCAST_BENCH_BYTES_SCALE must be in (0, 1], got "${process.env.RELCAST_BENCH_BYTES_SCALE}"`);
  const totalBytes = Math.round(8 * GiB * SCALE * BYTES_SCALE);
  const files = Math.max(200, Math.round(100_000 * SCALE));
  const hugeBytes = Math.round(4352 * MiB * SCALE * BYTES_SCALE); // 4.25 GiB at full size: over what a plain zip can hold
  const input = `${fmtBytes(totalBytes)}, ${files} files, one of ${fmtBytes(hugeBytes)}`;
  const fs = await statfs(tmp);
  const free = fs.bavail * fs.bsize;
  const need = Math.round(2.1 * totalBytes) + GiB;
  if (free < need) {
    console.log(`  big: skipped, ${fmtBytes(free)} free in ${tmp} and the row needs ${fmtBytes(need)}`);
    const none = { wall: 0, rssMb: 0, cpuPct: 0 };
    row("zip 8 GiB vs zip -r -y", input, { ours: none, reference: { ...none, wall: 1 } }, [{ label: `enough free disk (${fmtBytes(need)})`, ok: false }]);
    return;
  }
  await mkdir(root, { recursive: true });
  try {
    let t = performance.now();
    const bundle = await makeBigBundle(path.join(root, "src"), { files, totalBytes, hugeBytes });
    console.log(`  big: bundle generated in ${round((performance.now() - t) / 1000, 1)}s (load ${load()})`);
    const hugeName = "Contents/Resources/models/model.gguf";

    const ourZip = path.join(root, "ours.zip");
    const ours = measure(["node", path.join(HERE, "zip-one.mjs"), bundle, ourZip], { stdout: `${ourZip}.txt` });
    const ourSize = statSync(ourZip).size;
    t = performance.now();
    const read = pythonZipCheck(ourZip, hugeName);
    console.log(`  big: zip step ${round(ours.wall, 1)}s ${round(ours.rssMb, 1)} MB; python zipfile check in ${round((performance.now() - t) / 1000, 1)}s (load ${load()})`);
    await rm(ourZip);

    const theirZip = path.join(root, "info-zip.zip");
    const theirs = measure(["zip", "-r", "-y", "-q", theirZip, path.basename(bundle)], { cwd: path.dirname(bundle) });
    const theirSize = statSync(theirZip).size;
    await rm(theirZip);
    console.log(`  big: zip -r -y ${round(theirs.wall, 1)}s ${round(theirs.rssMb, 1)} MB (load ${load()})`);

    // A real publish: folder store, a small disk image, no older releases (so no deltas).
    const key = keyPair();
    const keyFile = path.join(root, "key.txt");
    await writeFile(keyFile, key.seedB64 + "\n", { mode: 0o600 });
    const dmg = path.join(root, "BigPlugin.dmg");
    await writeBigFile(dmg, Math.round(64 * MiB * SCALE * BYTES_SCALE) || 1);
    await writeFile(path.join(root, "notes.md"), "- Ships the 8 GiB model\n");
    const store = path.join(root, "store");
    const config = await writeConfig(root, "big-plugin", `file://${store}`);
    const stderrFile = path.join(root, "publish.stderr");
    const publish = measure(["node", cli, "--debug", "publish", "--config", config, "--version", "1.0.0", "--build-number", "100", "--app", bundle,
      "--dmg", dmg, "--notes", path.join(root, "notes.md"), "--key-file", keyFile, "--json"], { cwd: root, env: { MEASURE_STDERR_FILE: stderrFile } });
    const record = JSON.parse(await readFile(path.join(store, "releases", "1.0.0", "release.json"), "utf8"));
    const publishedSize = statSync(path.join(store, "releases", "1.0.0", "big-plugin-1.0.0.zip")).size;
    const steps = stepSplit(await readFile(stderrFile, "utf8"));

    const side = (m) => ({ wall: round(m.wall, 3), rssMb: round(m.rssMb, 1), cpuPct: round((100 * m.cpu) / m.wall, 0) });
    row("zip 8 GiB vs zip -r -y", input, { ours: side(ours), reference: side(theirs) }, [
      { label: `time ≤ ${TIME_LIMIT.toFixed(1)}× zip -r -y`, ok: ours.wall <= TIME_LIMIT * theirs.wall },
      { label: `zip step peak RSS < ${RSS_LIMIT_MB} MB`, ok: ours.rssMb < RSS_LIMIT_MB },
      { label: `folder-store publish peak RSS < ${RSS_LIMIT_MB} MB (${round(publish.rssMb, 1)} MB)`, ok: publish.rssMb < RSS_LIMIT_MB },
      { label: `python zipfile lists every file and link and reads the ${fmtBytes(hugeBytes)} entry whole`, ok: read.ok && read.entries >= files + 2 && read.declared === hugeBytes && read.read === hugeBytes },
      { label: "published zip is the record's size", ok: record.autoupdate?.sizeBytes === publishedSize },
    ]);
    Object.assign(lastRow(), {
      sizes: { ours: ourSize, infoZip: theirSize, ratio: round(ourSize / theirSize, 4) },
      publish: { ...side(publish), steps: Object.fromEntries(steps.map(([n, ms]) => [n, round(ms / 1000, 2)])) },
    });
    console.log(`    zip size ours ${ourSize} B, Info-ZIP ${theirSize} B; python zipfile: ${read.ok ? `${read.entries} entries, ${read.read} B of the big one read` : read.detail}`);
    console.log(`    publish (folder store, load ${load()}): ${round(publish.wall, 1)}s, peak RSS ${round(publish.rssMb, 1)} MB, ${side(publish).cpuPct}% CPU; steps ${steps.map(([n, ms]) => `${n} ${(ms / 1000).toFixed(2)}s`).join(", ")}`);
  } catch (err) {
    // A failure here (a tool's exit code, a full disk) fails this row; the bench goes on to the others.
    console.log(`  big: FAILED: ${err.message}`);
    const none = { wall: 0, rssMb: 0, cpuPct: 0 };
    row("zip 8 GiB vs zip -r -y", input, { ours: none, reference: { ...none, wall: 1 } }, [{ label: `ran to the end (${err.message.split("\n")[0]})`, ok: false }]);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
