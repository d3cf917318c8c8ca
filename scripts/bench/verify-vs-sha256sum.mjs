// `relcast verify` of a folder store with 200 releases against sha256sum over the same objects,
// for `npm run bench` (issue 23, target 5): verify hashes every disk image and update zip (and the
// latest copies) and must do so at no less than 0.8× sha256sum's throughput. Ratio shown: verify's
// wall time over sha256sum's (throughput ratio = its inverse).
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { makeHistoryStore } from "./history-store.mjs";

const MiB = 1 << 20;

export async function benchVerify(kit) {
  const { tmp, cli, SCALE, measure, round, keyPair, writeConfig, sideBySide, row } = kit;
  const root = path.join(tmp, "verify");
  const storeDir = path.join(root, "store");
  const key = keyPair();
  const keyFile = path.join(root, "key.txt");
  const count = Math.max(20, Math.round(200 * SCALE));
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  await writeFile(keyFile, key.seedB64 + "\n", { mode: 0o600 });
  const config = await writeConfig(root, "bench-plugin", `file://${storeDir}`);
  await makeHistoryStore({ cli, config, keyFile, publicKey: key.publicB64, storeDir, work: path.join(root, "build"), count, dmgBytes: 4 * MiB, extraBytes: 2 * MiB });
  // The objects verify reads whole: every release's dmg and zip, and the latest copies.
  const objects = [];
  for (const version of await readdir(path.join(storeDir, "releases"), { withFileTypes: true })) {
    if (!version.isDirectory()) continue;
    for (const f of await readdir(path.join(storeDir, "releases", version.name))) {
      if (f.endsWith(".dmg") || f.endsWith(".zip")) objects.push(path.join(storeDir, "releases", version.name, f));
    }
  }
  const list = path.join(root, "objects.txt");
  await writeFile(list, objects.join("\0"));
  // The generated releases share one template zip, whose Info.plist names the template's version and
  // build: verify reports that (exit 11) for every copy. Hashes, sizes and signatures must all pass.
  const report = path.join(root, "report.json");
  const sides = sideBySide(
    () => measure(["node", cli, "verify", "--config", config, "--public-key", key.publicB64, "--json"], { cwd: root, stdout: report, exitCodes: [0, 11] }),
    () => measure(["sh", "-c", `xargs -0 sha256sum < "${list}"`], { cwd: root }),
  );
  const rows = JSON.parse(await readFile(report, "utf8")).releases;
  const hashed = rows.length === count && rows.every((r) => r.checks.dmg.ok === true && r.checks.zip.ok === true && !r.checks.zip.skipped && r.checks.signature.ok === true && !r.checks.signature.skipped);
  await rm(root, { recursive: true, force: true });
  const throughput = round(sides.reference.wall / sides.ours.wall, 2);
  row(`verify (${count} releases) vs sha256sum`, `${objects.length} objects`, sides, [
    { label: `throughput ≥ 0.8× sha256sum's (${throughput}×)`, ok: throughput >= 0.8 },
    { label: "every dmg, zip and signature checked and passing", ok: hashed },
  ]);
  kit.lastRow().throughputRatio = throughput;
}
