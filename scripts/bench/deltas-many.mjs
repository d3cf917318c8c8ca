// The many-files memory row (RELCAST_BENCH_ONLY=deltas-many): a plugin of 70,000 small files is published
// as 1.0.0, then 1.1.0 (three files edited) is published with its delta from 1.0.0 under measure.py.
// Peak RSS of the second publish must stay under 300 MB: what it holds per file (listing, zip directory,
// both trees, tree manifest) is what this row watches, not the bytes.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { addManyFiles } from "./make-bundle.mjs";
import { makeSamplePlugin } from "../sample-plugin.mjs";

const LIMIT_MB = 300;
/** RELCAST_BENCH_BYTES_SCALE shrinks the bundle's bytes, not its 70,000 files (see big-bundle.mjs). */
const BYTES_SCALE = Number(process.env.RELCAST_BENCH_BYTES_SCALE ?? 1);

export async function benchDeltasMany(kit) {
  const { tmp, cli, SCALE, measure, round, keyPair, writeConfig } = kit;
  const root = path.join(tmp, "deltas-many");
  await mkdir(root, { recursive: true });
  const key = keyPair();
  const keyFile = path.join(root, "key.txt");
  await writeFile(keyFile, key.seedB64 + "\n", { mode: 0o600 });
  const config = await writeConfig(root, "many-plugin", `file://${path.join(root, "store")}`, { deltas: { compression: "zlib" } });
  const files = Math.max(1000, Math.round(70_000 * SCALE));
  if (!(BYTES_SCALE > 0 && BYTES_SCALE <= 1)) throw new Error(`RELCAST_BENCH_BYTES_SCALE must be in (0, 1], got "${process.env.RELCAST_BENCH_BYTES_SCALE}"`);
  const totalBytes = Math.round(200 * 1024 * 1024 * SCALE * BYTES_SCALE);
  const plugins = {};
  for (const [version, build] of [["1.0.0", 100], ["1.1.0", 110]]) {
    const plugin = await makeSamplePlugin({ dir: root, version, build, publicKey: key.publicB64 });
    const many = path.join(plugin.app, "Contents", "Resources", "many");
    await addManyFiles(many, { files, totalBytes, seed: 5 });
    if (version === "1.1.0") {
      for (const i of [10, 20, 30]) {
        const file = path.join(many, `pack-${String(i % 100).padStart(2, "0")}`, `part-${Math.floor(i / 100) % 10}`, `resource-${String(i).padStart(5, "0")}.dat`);
        const data = await readFile(file);
        data.write("edited in 1.1.0", 0);
        await writeFile(file, data);
      }
    }
    plugins[version] = plugin;
  }
  const publish = (version) => {
    const p = plugins[version];
    return measure(["node", cli, "publish", "--config", config, "--version", version, "--app", p.app, "--dmg", p.dmg, "--notes", p.notes, "--key-file", keyFile, "--json"]);
  };
  publish("1.0.0");
  const m = publish("1.1.0");
  const record = JSON.parse(await readFile(path.join(root, "store", "releases", "1.1.0", "release.json"), "utf8"));
  const deltas = record.autoupdate?.deltas ?? [];
  const checks = [
    { label: `peak RSS < ${LIMIT_MB} MB`, ok: m.rssMb < LIMIT_MB },
    { label: "a delta from 1.0.0", ok: deltas.length === 1 && deltas[0].fromVersion === "1.0.0" },
  ];
  kit.pushRow({
    name: "memory deltas, many files",
    input: `second publish of ${files} files with a delta`,
    ours: { wall: round(m.wall, 3), rssMb: round(m.rssMb, 1), cpuPct: round((100 * m.cpu) / m.wall, 0) },
    reference: { wall: 0, rssMb: LIMIT_MB },
    ratio: round(m.rssMb / LIMIT_MB, 2),
    checks,
    pass: checks.every((c) => c.ok),
  });
  console.log(`  memory deltas, many files: ${round(m.rssMb, 1)} MB peak RSS in ${round(m.wall, 1)}s (limit ${LIMIT_MB} MB)${checks.every((c) => c.ok) ? "" : "  FAIL"}`);
}
