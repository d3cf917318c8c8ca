// Part size and concurrency of relcast's S3 file upload, measured against moto_server side by side
// with `aws s3 cp` of the same file (what s3.partSizeMiB / s3.uploadConcurrency default to comes
// from this, not habit). Each round uploads once per setting and once with aws, in a rotating order.
// usage: node scripts/bench/upload-sweep.mjs [MiB=256] [rounds=2]   (after npm run build)
// Prints one line per setting: median seconds, and the ratio to aws s3 cp's median.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { openStore } from "../../dist/src/store/open-store.js";
import { freePort, waitUntilAnswering } from "../loopback-server.mjs";

const MiB = 1024 * 1024;
const size = Number(process.argv[2] ?? 256) * MiB;
const rounds = Number(process.argv[3] ?? 2);
const AWS_ENV = { AWS_ACCESS_KEY_ID: "test", AWS_SECRET_ACCESS_KEY: "test", AWS_DEFAULT_REGION: "us-east-1", AWS_REGION: "us-east-1" };
const settings = [
  [8, 4],
  [8, 8],
  [16, 4],
  [16, 8],
  [32, 4],
  [64, 2],
  [64, 4],
];

const tmp = await mkdtemp(path.join(os.tmpdir(), "relcast-upload-sweep-"));
const port = await freePort();
const moto = spawn("moto_server", ["-H", "127.0.0.1", "-p", String(port)], { stdio: "ignore", env: { ...process.env, ...AWS_ENV } });
try {
  const endpoint = `http://127.0.0.1:${port}`;
  await waitUntilAnswering({ child: moto, name: "moto_server", timeoutMs: 30_000, exited: (c) => new Error(`moto_server exited ${c}`), probe: async () => (await fetch(`${endpoint}/moto-api/`)).arrayBuffer() });
  Object.assign(process.env, AWS_ENV);
  const aws = (...args) => {
    const r = spawnSync("aws", ["--endpoint-url", endpoint, ...args], { env: process.env, encoding: "utf8" });
    if (r.status !== 0) throw new Error(r.stderr);
  };
  aws("s3api", "create-bucket", "--bucket", "sweep");
  const file = path.join(tmp, "upload.bin");
  await writeFile(file, randomBytes(size));
  const times = new Map();
  const record = (name, seconds) => times.set(name, [...(times.get(name) ?? []), seconds]);
  let n = 0;
  for (let round = 0; round < rounds; round++) {
    const order = [...settings.map((s) => ["relcast", ...s]), ["aws"]];
    for (let i = 0; i < round; i++) order.push(order.shift());
    for (const [kind, part, queue] of order) {
      const key = `k/${n++}`;
      const started = performance.now();
      if (kind === "aws") aws("s3", "cp", "--only-show-errors", file, `s3://sweep/${key}`);
      else {
        const store = await openStore("s3://sweep", tmp, { s3: { endpoint, forcePathStyle: true, region: "us-east-1", partSizeMiB: part, uploadConcurrency: queue } });
        await store.put(key, { file }, { contentType: "application/octet-stream" });
        await store.close?.();
      }
      record(kind === "aws" ? "aws s3 cp" : `relcast part ${part} MiB × ${queue}`, (performance.now() - started) / 1000);
      aws("s3", "rm", "--only-show-errors", `s3://sweep/${key}`);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ref = median(times.get("aws s3 cp"));
  console.log(`${size / MiB} MiB to moto, ${rounds} round(s), load ${os.loadavg()[0].toFixed(1)}, ${os.cpus().length} cores`);
  for (const [name, xs] of times) console.log(`${name.padEnd(28)} ${median(xs).toFixed(2)} s  (${xs.map((x) => x.toFixed(2)).join(", ")})  ${(median(xs) / ref).toFixed(2)}× aws`);
} finally {
  moto.kill("SIGTERM");
  await rm(tmp, { recursive: true, force: true });
}
