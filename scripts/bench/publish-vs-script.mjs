// Whole publish against the shell script it replaces, for `npm run bench` (issue 23, targets 1 and 2):
//   folder store: zip -r -y, openssl pkeyutl -sign -rawin, cp into releases/<v>/ and releases/latest/
//   S3 (moto):    zip -r -y, openssl pkeyutl -sign -rawin, two aws s3 cp to the same server and one
//                 aws s3api copy-object per server-side copy relcast makes (six)
// on the zip benchmark's bundle (400 MB, 3,000 files, half random, symlinks) plus a 256 MiB disk image.
// Each relcast run publishes into an empty store with --debug, and the per-step split of its median run is printed.
import { readFileSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { spawnSync } from "node:child_process";

const MiB = 1 << 20;

/** `debug: <step>: <n> ms` lines of a publish --debug run, in order. */
export function stepSplit(stderr) {
  const steps = [];
  for (const m of stderr.matchAll(/^debug: ([\w-]+): (\d+) ms$/gm)) steps.push([m[1], Number(m[2])]);
  return steps;
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); undefined elsewhere. */
function cpuSecondsOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

const formatSplit = (steps) => steps.map(([name, ms]) => `${name} ${(ms / 1000).toFixed(2)}s`).join(", ");

/**
 * kit: { tmp, cli, SCALE, RUNS, measure, median, round, fmtBytes, writeBigFile, keyPair, aws, writeConfig, row, makeBenchBundle, AWS_ENV }
 * kinds: ["folder"] and/or ["s3"] (needs moto).
 */
export async function benchPublish(kit, kinds, moto) {
  const { tmp, cli, SCALE, RUNS, measure, median, round, fmtBytes, writeBigFile, keyPair, aws, writeConfig, row, makeBenchBundle, AWS_ENV } = kit;
  const root = path.join(tmp, "publish");
  const totalBytes = Math.round(400 * MiB * SCALE);
  const files = Math.max(50, Math.round(3000 * SCALE));
  const bundle = await makeBenchBundle(root, { files, totalBytes, seed: 7 });
  const dmgBytes = Math.round(256 * MiB * SCALE);
  const dmg = path.join(root, "BenchPlugin.dmg");
  await writeBigFile(dmg, dmgBytes);
  const notes = path.join(root, "notes.md");
  await writeFile(notes, "- Faster publishing\n");
  const key = keyPair();
  const keyFile = path.join(root, "key.txt");
  await writeFile(keyFile, key.seedB64 + "\n", { mode: 0o600 });
  await writeFile(path.join(root, "key.pem"), key.pem, { mode: 0o600 });
  const input = `${fmtBytes(totalBytes)} bundle, ${files} files + ${fmtBytes(dmgBytes)} dmg`;

  for (const kind of kinds) {
    if (kind === "s3" && !moto) continue;
    const bucket = `bench-publish-${kind}`;
    const storeDir = path.join(root, "store");
    let config;
    if (kind === "s3") {
      aws(moto.endpoint, "s3api", "create-bucket", "--bucket", bucket);
      config = await writeConfig(root, "bench-plugin", `s3://${bucket}`, { s3: { endpoint: moto.endpoint, forcePathStyle: true, region: "us-east-1" } });
    } else {
      config = await writeConfig(root, "bench-plugin", `file://${storeDir}`);
    }
    const reset = async () => {
      if (kind === "s3") aws(moto.endpoint, "s3", "rm", "--recursive", "--only-show-errors", `s3://${bucket}/`);
      await rm(storeDir, { recursive: true, force: true });
      await rm(path.join(root, "script"), { recursive: true, force: true });
    };
    const splits = [];
    const ours = [];
    const script = [];
    // On S3, the CPU moto_server spends on each side's requests: moto does every upload and server-side copy in one
    // Python process, so this is a floor under that side's time that no client can go below.
    const motoCpu = { ours: [], script: [] };
    const withMotoCpu = (side, run) => {
      const before = kind === "s3" ? cpuSecondsOf(moto.child.pid) : undefined;
      const m = run();
      const after = before === undefined ? undefined : cpuSecondsOf(moto.child.pid);
      if (after !== undefined) motoCpu[side].push(after - before);
      return m;
    };
    const zipName = "bench-plugin-1.0.0.zip";
    // The same layout as relcast's: both uploads, then one server-side copy per public copy relcast makes
    // (downloads/<id>-<v>.*, releases/latest/*, downloads/<id>-latest.*), each an `aws s3api copy-object`.
    const copies = ["dmg", "zip"].flatMap((ext) => [
      [`releases/1.0.0/bench-plugin-1.0.0.${ext}`, `downloads/bench-plugin-1.0.0.${ext}`],
      [`releases/1.0.0/bench-plugin-1.0.0.${ext}`, `releases/latest/bench-plugin-1.0.0.${ext}`],
      [`releases/1.0.0/bench-plugin-1.0.0.${ext}`, `downloads/bench-plugin-latest.${ext}`],
    ]);
    const copyLines = kind === "s3" ? copies.map(([from, to]) => `aws --endpoint-url ${moto.endpoint} s3api copy-object --bucket ${bucket} --copy-source ${bucket}/${from} --key ${to} >/dev/null`) : [];
    const scriptLine = kind === "s3"
      ? [`aws --endpoint-url ${moto.endpoint} s3 cp --only-show-errors script/${zipName} s3://${bucket}/releases/1.0.0/${zipName}`, `aws --endpoint-url ${moto.endpoint} s3 cp --only-show-errors BenchPlugin.dmg s3://${bucket}/releases/1.0.0/bench-plugin-1.0.0.dmg`, ...copyLines].join(" && ")
      : `mkdir -p store/releases/1.0.0 store/releases/latest && cp script/${zipName} BenchPlugin.dmg store/releases/1.0.0/ && cp script/${zipName} BenchPlugin.dmg store/releases/latest/`;
    const runScript = () => measure(["sh", "-c", `set -e; mkdir -p script; zip -r -y -q script/${zipName} BenchPlugin.bundle && openssl pkeyutl -sign -rawin -inkey key.pem -in script/${zipName} -out script/${zipName}.sig && ${scriptLine}`], { cwd: root, env: AWS_ENV });
    const runOurs = () => {
      const stderrFile = path.join(root, `ours-${ours.length}.stderr`);
      const m = measure(["node", cli, "--debug", "publish", "--config", config, "--version", "1.0.0", "--build-number", "100", "--app", bundle, "--dmg", dmg, "--notes", notes, "--key-file", keyFile, "--json"],
        { cwd: root, env: { ...AWS_ENV, MEASURE_STDERR_FILE: stderrFile } });
      return { ...m, stderrFile };
    };
    // The published zip must verify with openssl, as the script's signature does.
    let signatureOk = true;
    const checkSignature = async () => {
      if (kind !== "folder") return;
      const record = JSON.parse(await readFile(path.join(storeDir, "releases", "1.0.0", "release.json"), "utf8"));
      const pub = spawnSync("openssl", ["pkey", "-in", path.join(root, "key.pem"), "-pubout", "-out", path.join(root, "pub.pem")]);
      await writeFile(path.join(root, "sig.bin"), Buffer.from(record.autoupdate.edSignature, "base64"));
      const check = spawnSync("openssl", ["pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", path.join(root, "pub.pem"), "-in", path.join(storeDir, "releases", "1.0.0", zipName), "-sigfile", path.join(root, "sig.bin")]);
      signatureOk &&= pub.status === 0 && check.status === 0;
    };
    for (let i = 0; i < RUNS; i++) {
      for (const side of i % 2 === 0 ? ["ours", "script"] : ["script", "ours"]) {
        await reset();
        if (side === "ours") {
          const m = withMotoCpu("ours", runOurs);
          splits.push(stepSplit(await readFile(m.stderrFile, "utf8")));
          await checkSignature();
          ours.push(m);
        } else script.push(withMotoCpu("script", runScript));
      }
    }
    await reset();
    const summary = (xs) => ({ wall: round(median(xs.map((x) => x.wall)), 3), rssMb: round(Math.max(...xs.map((x) => x.rssMb)), 1), cpuPct: round((100 * median(xs.map((x) => x.cpu))) / median(xs.map((x) => x.wall)), 0) });
    const sides = { ours: summary(ours), reference: summary(script) };
    const medianRun = ours.indexOf([...ours].sort((a, b) => a.wall - b.wall)[Math.floor(ours.length / 2)]);
    const split = splits[medianRun] ?? [];
    const limit = kind === "folder" ? 0.5 : 0.45;
    row(`publish (${kind} store) vs script`, input, sides, [
      { label: `time ≤ ${limit}× the script`, ok: sides.ours.wall <= limit * sides.reference.wall },
      { label: `peak RSS < 250 MB (${sides.ours.rssMb} MB)`, ok: sides.ours.rssMb < 250 },
      ...(kind === "folder" ? [{ label: "edSignature verifies with openssl", ok: signatureOk }] : []),
    ]);
    kit.lastRow().steps = Object.fromEntries(split.map(([n, ms]) => [n, round(ms / 1000, 2)]));
    console.log(`    steps of the median relcast run: ${formatSplit(split)}`);
    if (motoCpu.ours.length > 0 && motoCpu.script.length > 0) {
      const cpu = { ours: round(median(motoCpu.ours), 2), script: round(median(motoCpu.script), 2) };
      kit.lastRow().motoCpu = cpu;
      console.log(`    moto_server CPU: ${cpu.ours}s for relcast's requests (upload, record, downloads, latest and site copies, feeds), ${cpu.script}s for the script's two uploads and six copies; ${limit}× the script's time is ${round(limit * sides.reference.wall, 2)}s`);
    }
  }
  await rm(root, { recursive: true, force: true });
}
