// `npm run bench`: relcast against the tools a release engineer would script
// instead, run side by side in this process tree on generated inputs (a temp
// folder, removed at the end). Prints a table and writes bench/results.json.
//
//   RELCAST_BENCH_SCALE=0.25  shrink every input (quick look; targets are for 1)
//   RELCAST_BENCH_ONLY=sign,zip,upload,history,memory,publish,publish-s3,verify,gateway,deltas,deltas-many,big  run a subset
//                             (big: 8 GiB / 100,000 files against zip -r -y, up to ~15 GiB of temp files while it runs)
//   RELCAST_BENCH_RUNS=3      runs per side (the median wall time is compared)
import { spawn, spawnSync } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { createWriteStream, statSync } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { freePort, waitUntilAnswering } from "./loopback-server.mjs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { makeBenchBundle } from "./bench/make-bundle.mjs";
import { makeHistoryStore } from "./bench/history-store.mjs";
import { benchPublish } from "./bench/publish-vs-script.mjs";
import { benchVerify } from "./bench/verify-vs-sha256sum.mjs";
import { benchDeltasMany } from "./bench/deltas-many.mjs";
import { benchBig } from "./bench/big-bundle.mjs";
import { benchGatewayThroughput, describeGatewayRow } from "./bench/gateway-throughput.mjs";
import { makeSamplePlugin } from "./sample-plugin.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const cli = path.join(repo, "dist", "cli", "relcast.mjs");
const MEASURE = path.join(repo, "scripts", "bench", "measure.py");
const SCALE = Number(process.env.RELCAST_BENCH_SCALE ?? 1);
const RUNS = Math.max(1, Number(process.env.RELCAST_BENCH_RUNS ?? 3));
const ONLY = (process.env.RELCAST_BENCH_ONLY ?? "").split(",").map((s) => s.trim()).filter(Boolean);
const MiB = 1 << 20;
const GiB = 1 << 30;
const cores = os.availableParallelism();
const AWS_ENV = { AWS_ACCESS_KEY_ID: "bench", AWS_SECRET_ACCESS_KEY: "bench", AWS_REGION: "us-east-1", AWS_DEFAULT_REGION: "us-east-1", AWS_EC2_METADATA_DISABLED: "true" };

if (!(SCALE > 0)) throw new Error(`RELCAST_BENCH_SCALE must be a positive number, got "${process.env.RELCAST_BENCH_SCALE}"`);
const wanted = (name) => ONLY.length === 0 || ONLY.includes(name);
const tmp = await mkdtemp(path.join(os.tmpdir(), "relcast-bench-"));
const started = [];
const cleanup = async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  await rm(tmp, { recursive: true, force: true });
};
for (const signal of ["SIGINT", "SIGTERM"]) process.once(signal, () => void cleanup().then(() => process.exit(130)));

const fmtBytes = (n) => (n >= GiB ? `${(n / GiB).toFixed(2)} GiB` : `${Math.round(n / MiB)} MiB`);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** Runs a command under measure.py: wall seconds, peak RSS (MB) of the process tree's largest process, CPU seconds. */
function measure(argv, { cwd = tmp, env = {}, stdout = "-", exitCodes = [0] } = {}) {
  const run = spawnSync("python3", [MEASURE, stdout, ...argv], { cwd, env: { ...process.env, ...env }, encoding: "utf8", maxBuffer: 16 * MiB });
  if (run.status !== 0) throw new Error(`measure.py failed for ${argv.join(" ")}: ${run.stderr}`);
  const m = JSON.parse(run.stdout);
  if (!exitCodes.includes(m.rc)) throw new Error(`${argv.join(" ")} exited ${m.rc}:\n${m.stderr}`);
  return { wall: m.wall, rssMb: m.maxRssKb / 1024, cpu: m.cpu };
}

/** RUNS rounds of both sides, alternating who goes first; medians of wall time, worst peak RSS. */
function sideBySide(ours, reference, { before } = {}) {
  const o = [];
  const r = [];
  for (let i = 0; i < RUNS; i++) {
    const order = i % 2 === 0 ? [[ours, o], [reference, r]] : [[reference, r], [ours, o]];
    for (const [fn, into] of order) {
      before?.();
      into.push(fn());
    }
  }
  const summary = (xs) => ({ wall: round(median(xs.map((x) => x.wall)), 3), rssMb: round(Math.max(...xs.map((x) => x.rssMb)), 1), cpuPct: round((100 * median(xs.map((x) => x.cpu))) / median(xs.map((x) => x.wall)), 0) });
  return { ours: summary(o), reference: summary(r) };
}

async function writeBigFile(file, bytes) {
  const block = randomBytes(8 * MiB);
  const out = createWriteStream(file);
  for (let written = 0, n = 0; written < bytes; n++) {
    const chunk = Buffer.from(block.subarray(0, Math.min(block.length, bytes - written)));
    chunk.writeUInt32BE(n, 0);
    if (!out.write(chunk)) await new Promise((r) => out.once("drain", r));
    written += chunk.length;
  }
  await new Promise((resolve, reject) => out.end((err) => (err ? reject(err) : resolve())));
}

function keyPair() {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    seedB64: privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32).toString("base64"),
    pem: privateKey.export({ format: "pem", type: "pkcs8" }),
    publicB64: publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("base64"),
  };
}

/** moto_server on a free loopback port, stopped (by its pid) at the end. */
async function startMoto() {
  const port = await freePort();
  const child = spawn("moto_server", ["-H", "127.0.0.1", "-p", String(port)], { stdio: "ignore", env: { ...process.env, ...AWS_ENV } });
  started.push(child);
  const endpoint = `http://127.0.0.1:${port}`;
  await waitUntilAnswering({
    child,
    name: `moto_server on ${endpoint}`,
    timeoutMs: 30_000,
    exited: (code) => new Error(`moto_server exited with ${code}; install it with pip install 'moto[server]'`),
    probe: async () => (await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(1000) })).arrayBuffer(),
  });
  return { endpoint, child };
}

function aws(endpoint, ...args) {
  const run = spawnSync("aws", ["--endpoint-url", endpoint, ...args], { env: { ...process.env, ...AWS_ENV }, encoding: "utf8" });
  if (run.status !== 0) throw new Error(`aws ${args.join(" ")}: ${run.stderr}`);
  return run.stdout;
}

const rows = [];
function row(name, input, sides, checks) {
  const ratio = round(sides.ours.wall / sides.reference.wall, 2);
  const failed = checks.filter((c) => !c.ok).map((c) => c.label);
  rows.push({ name, input, ...sides, ratio, checks, pass: failed.length === 0 });
  console.log(`  ${name}: ours ${sides.ours.wall}s ${sides.ours.rssMb} MB, reference ${sides.reference.wall}s ${sides.reference.rssMb} MB, ratio ${ratio}` + (failed.length ? `  FAIL: ${failed.join("; ")}` : "  pass"));
}

// 1. Signing: relcast sign against openssl pkeyutl -sign -rawin, same key, same file.
async function benchSign() {
  const bytes = Math.round(GiB * SCALE);
  const file = path.join(tmp, "sign-input.bin");
  await writeBigFile(file, bytes);
  const key = keyPair();
  await writeFile(path.join(tmp, "sign.key"), key.seedB64 + "\n", { mode: 0o600 });
  await writeFile(path.join(tmp, "sign.pem"), key.pem, { mode: 0o600 });
  const sides = sideBySide(
    () => measure(["node", cli, "sign", file, "--ed-key-file", "sign.key"], { stdout: path.join(tmp, "sign-ours.txt") }),
    () => measure(["openssl", "pkeyutl", "-sign", "-rawin", "-inkey", "sign.pem", "-in", file, "-out", "sign-openssl.bin"]),
  );
  const ours = /sparkle:edSignature="([^"]+)"/.exec(await readFile(path.join(tmp, "sign-ours.txt"), "utf8"))?.[1];
  const theirs = (await readFile(path.join(tmp, "sign-openssl.bin"))).toString("base64");
  await rm(file);
  row("sign", fmtBytes(bytes), sides, [
    { label: "time ≤ 1.0× openssl", ok: sides.ours.wall <= sides.reference.wall },
    { label: "peak RSS < 100 MB", ok: sides.ours.rssMb < 100 },
    { label: "signature equals openssl's byte for byte", ok: ours === theirs },
  ]);
}

// 2. Zip: relcast's reproducible zip step against Info-ZIP zip -r -y -q (default level).
async function benchZip() {
  const root = path.join(tmp, "zip");
  const totalBytes = Math.round(400 * MiB * SCALE);
  const files = Math.max(50, Math.round(3000 * SCALE));
  const bundle = await makeBenchBundle(root, { files, totalBytes, seed: 7 });
  const name = path.basename(bundle);
  const outputs = [];
  const sides = sideBySide(
    () => {
      const out = path.join(root, `ours-${outputs.length}.zip`);
      const m = measure(["node", path.join(repo, "scripts", "bench", "zip-one.mjs"), bundle, out], { stdout: `${out}.txt` });
      outputs.push(`${out}.txt`);
      return m;
    },
    () => measure(["zip", "-r", "-y", "-q", path.join(root, "zip.zip"), name], { cwd: path.dirname(bundle) }),
    { before: () => spawnSync("rm", ["-f", path.join(root, "zip.zip")]) },
  );
  const digests = new Set(await Promise.all(outputs.map(async (f) => (await readFile(f, "utf8")).split(" ")[0])));
  const test = spawnSync("unzip", ["-tq", path.join(root, "ours-0.zip")], { encoding: "utf8" });
  // Both deflate at level 6; say how the sizes compare (ours stores incompressible files from probes, Info-ZIP after trying).
  const sizes = { ours: statSync(path.join(root, "ours-0.zip")).size, infoZip: statSync(path.join(root, "zip.zip")).size };
  await rm(root, { recursive: true, force: true });
  row("zip", `${fmtBytes(totalBytes)}, ${files} files`, sides, [
    { label: "time ≤ 0.6× zip", ok: sides.ours.wall <= 0.6 * sides.reference.wall },
    { label: `uses more than one core (${sides.ours.cpuPct}% CPU)`, ok: cores < 2 || sides.ours.cpuPct > 110 },
    { label: "reproducible (same bytes every run)", ok: digests.size === 1 },
    { label: "unzip -t passes", ok: test.status === 0 },
  ]);
  rows.at(-1).sizes = { ...sizes, ratio: round(sizes.ours / sizes.infoZip, 4) };
  console.log(`    level 6 both; zip size ours ${sizes.ours} B, Info-ZIP ${sizes.infoZip} B (${rows.at(-1).sizes.ratio}×)`);
}

// 3. Upload: relcast's S3 store (staged, as publish sends its disk image) against aws s3 cp, both to the same local
// moto_server through a pass-through proxy that times each multipart upload at the store: from its
// CreateMultipartUpload's arrival to the end of its CompleteMultipartUpload's answer (no process start-up on either side).
async function benchUpload(moto) {
  const bytes = Math.round(GiB * SCALE);
  const file = path.join(tmp, "upload-input.bin");
  await writeBigFile(file, bytes);
  aws(moto.endpoint, "s3api", "create-bucket", "--bucket", "bench-upload");
  const clockLog = path.join(tmp, "store-clock.jsonl");
  const proxy = spawn("node", [path.join(repo, "scripts", "bench", "store-clock-proxy.mjs"), moto.endpoint, clockLog], { stdio: ["ignore", "pipe", "inherit"] });
  started.push(proxy);
  const port = await new Promise((resolve, reject) => {
    let out = "";
    proxy.stdout.on("data", (d) => {
      out += d;
      const m = /port (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proxy.once("exit", (code) => reject(new Error(`store clock proxy exited with ${code}`)));
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const clear = () => aws(moto.endpoint, "s3", "rm", "--recursive", "--only-show-errors", "s3://bench-upload/");
  const atStore = { ours: [], reference: [] };
  // The last multipart upload of `key` in the proxy's log, in seconds.
  const storeSeconds = async (key) => {
    const events = (await readFile(clockLog, "utf8").catch(() => "")).trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.path === `/bench-upload/${key}`);
    const created = events.filter((e) => e.event === "create").at(-1);
    const completed = events.filter((e) => e.event === "complete").at(-1);
    await rm(clockLog, { force: true });
    return created && completed ? round((completed.t - created.t) / 1000, 3) : Number.NaN;
  };
  const sizes = [];
  const runs = { ours: [], reference: [] };
  for (let i = 0; i < RUNS; i++) {
    for (const side of i % 2 === 0 ? ["ours", "reference"] : ["reference", "ours"]) {
      clear();
      await rm(clockLog, { force: true });
      if (side === "ours") {
        runs.ours.push(measure(["node", path.join(repo, "scripts", "bench", "upload-one.mjs"), endpoint, "bench-upload", "ours.bin", file], { env: AWS_ENV }));
        sizes.push(JSON.parse(aws(moto.endpoint, "s3api", "head-object", "--bucket", "bench-upload", "--key", "ours.bin")).ContentLength);
        atStore.ours.push(await storeSeconds("ours.bin"));
      } else {
        runs.reference.push(measure(["aws", "--endpoint-url", endpoint, "s3", "cp", "--only-show-errors", file, "s3://bench-upload/aws.bin"], { env: AWS_ENV }));
        atStore.reference.push(await storeSeconds("aws.bin"));
      }
    }
  }
  proxy.kill("SIGTERM");
  clear();
  await rm(file);
  const summary = (xs) => ({ wall: round(median(xs.map((x) => x.wall)), 3), rssMb: round(Math.max(...xs.map((x) => x.rssMb)), 1), cpuPct: round((100 * median(xs.map((x) => x.cpu))) / median(xs.map((x) => x.wall)), 0) });
  const sides = { ours: summary(runs.ours), reference: summary(runs.reference) };
  const store = { ours: round(median(atStore.ours), 3), reference: round(median(atStore.reference), 3) };
  row("upload", fmtBytes(bytes), sides, [
    { label: `time at the store ≤ 1.0× aws s3 cp (${store.ours}s vs ${store.reference}s)`, ok: store.ours <= store.reference },
    { label: "uploaded size matches", ok: sizes.every((n) => n === bytes) },
  ]);
  rows.at(-1).atStore = { ...store, ratio: round(store.ours / store.reference, 2) };
  console.log(`    at the store (CreateMultipartUpload to the end of CompleteMultipartUpload, median): ours ${store.ours}s, aws s3 cp ${store.reference}s (${rows.at(-1).atStore.ratio}×)`);
}

async function writeConfig(dir, pluginId, store, extra = {}) {
  const file = path.join(dir, "relcast.config.json");
  await writeFile(file, JSON.stringify({ pluginId, displayName: "Bench Plugin", publisher: "Bench", appUrl: "https://updates.example.com", channel: "stable", timezone: "UTC", store, ...extra }, null, 2));
  return file;
}

// 4. History: one more publish into a store of 10,000 releases against one of 10.
async function benchHistory() {
  const root = path.join(tmp, "history");
  await mkdir(root, { recursive: true });
  const key = keyPair();
  const keyFile = path.join(root, "key.txt");
  await writeFile(keyFile, key.seedB64 + "\n", { mode: 0o600 });
  const big = Math.max(100, Math.round(10_000 * SCALE));
  const seeds = {};
  for (const count of [10, big]) {
    seeds[count] = path.join(root, `seed-${count}`);
    const config = await writeConfig(root, "bench-plugin", `file://${seeds[count]}`);
    await makeHistoryStore({ cli, config, keyFile, publicKey: key.publicB64, storeDir: seeds[count], work: path.join(root, "build"), count });
  }
  // Run i publishes 1.0.i into both stores as they stand (no copies: a copied folder store has new
  // inodes, so new ETags, and its first publish re-reads the whole catalog once).
  const plugins = [];
  for (let i = 0; i < RUNS; i++) plugins.push(await makeSamplePlugin({ dir: path.join(root, "new"), version: `1.0.${i}`, build: 1_000_000 + i, publicKey: key.publicB64 }));
  for (const count of [10, big]) await writeFile(path.join(root, `run-${count}.config.json`), JSON.stringify({ ...JSON.parse(await readFile(path.join(root, "relcast.config.json"), "utf8")), store: `file://${seeds[count]}` }));
  const publish = (count, i) => measure(["node", cli, "publish", "--config", path.join(root, `run-${count}.config.json`), "--version", `1.0.${i}`, "--app", plugins[i].app,
    "--dmg", plugins[i].dmg, "--notes", plugins[i].notes, "--key-file", keyFile, "--json"]);
  const o = [];
  const r = [];
  for (let i = 0; i < RUNS; i++) {
    if (i % 2 === 0) { o.push(publish(big, i)); r.push(publish(10, i)); } else { r.push(publish(10, i)); o.push(publish(big, i)); }
  }
  const catalog = JSON.parse(await readFile(path.join(seeds[big], "releases", "catalog.json"), "utf8"));
  await rm(root, { recursive: true, force: true });
  const pick = (xs) => ({ wall: round(median(xs.map((x) => x.wall)), 3), rssMb: round(Math.max(...xs.map((x) => x.rssMb)), 1), cpuPct: round((100 * median(xs.map((x) => x.cpu))) / median(xs.map((x) => x.wall)), 0) });
  const sides = { ours: pick(o), reference: pick(r) };
  const memRatio = round(sides.ours.rssMb / sides.reference.rssMb, 2);
  row(`history (${big} vs 10 releases)`, "publish of a small plugin", sides, [
    { label: "time ≤ 1.2× the 10-release store", ok: sides.ours.wall <= 1.2 * sides.reference.wall },
    { label: `memory ≤ 1.2× the 10-release store (${memRatio}×)`, ok: memRatio <= 1.2 },
    { label: `catalog holds ${big + RUNS} releases, newest first`, ok: catalog.count === big + RUNS && catalog.versions[0].version === `1.0.${RUNS - 1}` },
  ]);
  rows.at(-1).memoryRatio = memRatio;
}

// 5. Memory: publishing a 2 GiB disk image, to a folder store and to S3 (moto).
async function benchMemory(moto) {
  const root = path.join(tmp, "memory");
  await mkdir(root, { recursive: true });
  const key = keyPair();
  const keyFile = path.join(root, "key.txt");
  await writeFile(keyFile, key.seedB64 + "\n", { mode: 0o600 });
  const bytes = Math.round(2 * GiB * SCALE);
  const plugin = await makeSamplePlugin({ dir: root, version: "2.0.0", build: 200, publicKey: key.publicB64 });
  await writeBigFile(plugin.dmg, bytes);
  const stores = [["folder", `file://${path.join(root, "store")}`]];
  if (moto) {
    aws(moto.endpoint, "s3api", "create-bucket", "--bucket", "bench-memory");
    stores.push(["s3", "s3://bench-memory"]);
  }
  for (const [kind, url] of stores) {
    const config = await writeConfig(root, "bench-plugin", url, kind === "s3" ? { s3: { endpoint: moto.endpoint, forcePathStyle: true, region: "us-east-1" } } : {});
    const m = measure(["node", cli, "publish", "--config", config, "--version", "2.0.0", "--app", plugin.app, "--dmg", plugin.dmg, "--notes", plugin.notes, "--key-file", keyFile, "--json"], { env: AWS_ENV });
    const sides = { ours: { wall: round(m.wall, 3), rssMb: round(m.rssMb, 1), cpuPct: round((100 * m.cpu) / m.wall, 0) }, reference: { wall: round(m.wall, 3), rssMb: 250, cpuPct: 0 } };
    rows.push({ name: `memory (${kind} store)`, input: `publish of a ${fmtBytes(bytes)} dmg`, ...sides, ratio: round(m.rssMb / 250, 2), pass: m.rssMb < 250, checks: [{ label: "peak RSS < 250 MB", ok: m.rssMb < 250 }] });
    console.log(`  memory (${kind}): ${round(m.wall, 1)}s, peak RSS ${round(m.rssMb, 1)} MB (limit 250 MB)`);
    if (kind === "s3") aws(moto.endpoint, "s3", "rm", "--recursive", "--only-show-errors", "s3://bench-memory/");
  }
  await rm(root, { recursive: true, force: true });
}

// 6. Deltas: five Sparkle deltas for a 400 MiB bundle where a few files changed (made as publish makes
// them: old trees from their zips, each delta applied back and its tree hash checked), against zipping
// the new bundle once with relcast's zip step. Then peak RSS of one delta with a changed 100 MB file
// (shipped whole) and a changed 16 MiB file (diffed).
async function benchDeltas() {
  const { zipBundle } = await import("../dist/src/steps/zip/reproducible-zip.js");
  const { openZipBundleTree } = await import("../dist/src/sparkle/delta/zip-bundle-tree.js");
  const { serializeTreeManifest, treeManifestOf } = await import("../dist/src/sparkle/delta/tree-manifest.js");
  const root = path.join(tmp, "deltas");
  const totalBytes = Math.round(400 * MiB * SCALE);
  const files = Math.max(60, Math.round(3000 * SCALE));
  const bundle = await makeBenchBundle(path.join(root, "src"), { files, totalBytes, seed: 11 });
  const assets = path.join(bundle, "Contents", "Resources");
  const asset = (i) => path.join(assets, `group-${String(i % 40).padStart(2, "0")}`, `asset-${String(i).padStart(4, "0")}.bin`);
  /** One release's changes: Info.plist, three edited assets, one added file, one removed. */
  async function nextVersion(k) {
    await writeFile(path.join(bundle, "Contents", "Info.plist"), `<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>CFBundleVersion</key><string>${100 + k}</string></dict></plist>\n`);
    for (const i of [10 + k, 20 + 2 * k, 30 + 3 * k]) {
      const data = await readFile(asset(i));
      data.write(`release ${k} edit`, Math.floor(data.length / 2));
      await writeFile(asset(i), data);
    }
    await writeFile(path.join(assets, `added-${k}.txt`), `added in release ${k}\n`.repeat(2000));
    await rm(asset(50 + k), { force: true });
  }
  const oldZips = [];
  for (let k = 1; k <= 5; k++) {
    await nextVersion(k);
    oldZips.push(path.join(root, `old-${k}.zip`));
    // The record's SHA-256, which publish checks each old zip against.
    const made = await zipBundle(bundle, oldZips.at(-1));
    await writeFile(`${oldZips.at(-1)}.sha256`, `${made.sha256}\n`);
    // The tree manifest publish stores beside each release's record.
    const tree = await openZipBundleTree(oldZips.at(-1));
    await writeFile(`${oldZips.at(-1)}.tree.json`, serializeTreeManifest(await treeManifestOf(tree, `1.${k}`, made)));
    await tree.close();
  }
  await nextVersion(6);
  const newZip = path.join(root, "new.zip");
  const zipped = await zipBundle(bundle, newZip);
  const newZipSize = zipped.sizeBytes;
  // The content hashes the zip step hands the deltas step in a publish.
  await writeFile(`${newZip}.hashes.json`, JSON.stringify(Object.fromEntries([...zipped.contentHashes].map(([name, hash]) => [name, hash.toString("hex")]))));
  const sizesFile = path.join(root, "delta-sizes.txt");
  const sides = sideBySide(
    () => measure(["node", path.join(repo, "scripts", "bench", "deltas-five.mjs"), newZip, path.join(root, "work"), ...oldZips], { stdout: sizesFile }),
    () => measure(["node", path.join(repo, "scripts", "bench", "zip-one.mjs"), bundle, path.join(root, "ref.zip")], { stdout: path.join(root, "ref.txt") }),
    { before: () => spawnSync("rm", ["-rf", path.join(root, "work"), path.join(root, "ref.zip")]) },
  );
  const sizes = (await readFile(sizesFile, "utf8")).trim().split(" ").map(Number);
  console.log(`  delta sizes: ${sizes.map((n) => `${Math.round(n / 1024)} KiB`).join(", ")} (zip ${fmtBytes(newZipSize)})`);
  row("deltas ×5 vs zip", `${fmtBytes(totalBytes)}, ${files} files, 5 old zips`, sides, [
    { label: "time ≤ 1.0× the zip step", ok: sides.ours.wall <= sides.reference.wall },
    { label: "peak RSS < 250 MB", ok: sides.ours.rssMb < 250 },
    { label: "five deltas, each ≤ 7/8 of the zip", ok: sizes.length === 5 && sizes.every((n) => n <= (newZipSize * 7) / 8) },
  ]);

  // Memory: a 100 MB file that changed (over the diff limit: shipped whole) and a 16 MiB one (diffed).
  const a = path.join(root, "mem-a", "Mem.bundle");
  const b = path.join(root, "mem-b", "Mem.bundle");
  const big = Math.round(100 * 1000 * 1000 * SCALE);
  const mid = Math.round(16 * MiB * SCALE);
  for (const dir of [a, b]) await mkdir(path.join(dir, "Contents"), { recursive: true });
  await writeBigFile(path.join(a, "Contents", "big.bin"), big);
  await writeBigFile(path.join(a, "Contents", "mid.bin"), mid);
  for (const name of ["big.bin", "mid.bin"]) {
    const data = await readFile(path.join(a, "Contents", name));
    data.write("changed", 1000);
    await writeFile(path.join(b, "Contents", name), data);
  }
  await writeFile(path.join(a, "Contents", "Info.plist"), "<plist/>\n");
  await writeFile(path.join(b, "Contents", "Info.plist"), "<plist/>\n");
  const mem = measure(["node", cli, "delta", "create", a, b, path.join(root, "mem.delta")]);
  rows.push({ name: "memory deltas", input: `${fmtBytes(big)} whole + ${fmtBytes(mid)} diffed`, ours: { wall: round(mem.wall, 3), rssMb: round(mem.rssMb, 1), cpuPct: round((100 * mem.cpu) / mem.wall, 0) }, reference: { wall: 0, rssMb: 250 }, ratio: round(mem.rssMb / 250, 2), checks: [{ label: "peak RSS < 250 MB", ok: mem.rssMb < 250 }], pass: mem.rssMb < 250 });
  console.log(`  memory deltas: ${round(mem.rssMb, 1)} MB peak RSS in ${round(mem.wall, 3)}s (limit 250 MB)`);
  await rm(root, { recursive: true, force: true });
}

try {
  console.log(`relcast bench: ${cores} cores, node ${process.version}, scale ${SCALE}, ${RUNS} run(s) per side, inputs in ${tmp}`);
  const moto = wanted("upload") || wanted("memory") || wanted("publish-s3") ? await startMoto() : undefined;
  if (wanted("sign")) await benchSign();
  if (wanted("zip")) await benchZip();
  if (wanted("upload")) await benchUpload(moto);
  if (wanted("history")) await benchHistory();
  if (wanted("memory")) await benchMemory(moto);
  if (wanted("deltas")) await benchDeltas();
  const kit = { tmp, cli, SCALE, RUNS, measure, median, round, fmtBytes, writeBigFile, keyPair, aws, writeConfig, row, sideBySide, makeBenchBundle, AWS_ENV, lastRow: () => rows.at(-1), pushRow: (r) => rows.push(r) };
  if (wanted("deltas-many")) await benchDeltasMany(kit);
  const publishKinds = [...(wanted("publish") ? ["folder"] : []), ...(wanted("publish-s3") ? ["s3"] : [])];
  if (publishKinds.length > 0) await benchPublish(kit, publishKinds, moto);
  if (wanted("verify")) await benchVerify(kit);
  if (wanted("big")) await benchBig(kit);
  // Gateway throughput (scripts/bench/gateway-throughput.mjs): HMAC-proxied req/s vs a bare node proxy, per database, the sides
  // interleaved in every run; target ratio >= 0.8. At least 5 runs: the ratio is a median of per-run ratios.
  const gatewayRows = wanted("gateway") ? await benchGatewayThroughput({ repo, tmp, runs: Math.max(5, RUNS), requests: Math.max(1000, Math.round(10_000 * SCALE)), maxSeconds: 15 }) : [];
  for (const g of gatewayRows) g.pass = g.ratio >= 0.8;

  const table = [["benchmark", "input", "relcast", "reference", "ratio", "result"]];
  for (const r of rows) {
    const ref = r.name.startsWith("memory") ? `limit ${r.reference.rssMb} MB` : `${r.reference.wall}s ${r.reference.rssMb} MB`;
    table.push([r.name, r.input, `${r.ours.wall}s ${r.ours.rssMb} MB ${r.ours.cpuPct}% CPU`, ref, r.name.startsWith("memory") ? `${r.ratio} of limit` : `${r.ratio}×${r.memoryRatio ? ` (mem ${r.memoryRatio}×)` : ""}`, r.pass ? "pass" : `FAIL: ${r.checks.filter((c) => !c.ok).map((c) => c.label).join("; ")}`]);
  }
  const widths = table[0].map((_, i) => Math.max(...table.map((t) => t[i].length)));
  console.log("");
  for (const t of table) console.log(t.map((c, i) => c.padEnd(widths[i])).join("  "));
  for (const r of rows.filter((r) => r.steps)) console.log(`${r.name}, relcast steps (median run): ${Object.entries(r.steps).map(([n, sec]) => `${n} ${sec}s`).join(", ")}`);
  for (const r of rows.filter((r) => r.motoCpu)) console.log(`${r.name}, moto_server CPU (median run): relcast's requests ${r.motoCpu.ours}s, the script's ${r.motoCpu.script}s`);
  for (const g of gatewayRows) console.log(`${describeGatewayRow(g)}: ${g.pass ? "pass" : "FAIL"}`);
  const results = { date: new Date().toISOString(), cores, node: process.version, scale: SCALE, runs: RUNS, rows, gateway: gatewayRows };
  await mkdir(path.join(repo, "bench"), { recursive: true });
  await writeFile(path.join(repo, "bench", "results.json"), JSON.stringify(results, null, 2) + "\n");
  const all = [...rows, ...gatewayRows];
  console.log(`\n${all.filter((r) => r.pass).length}/${all.length} pass; written to bench/results.json`);
  process.exitCode = all.every((r) => r.pass) ? 0 : 1;
} finally {
  await cleanup();
}
