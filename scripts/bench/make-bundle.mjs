// Generates a plugin bundle for the zip benchmark: `files` files totalling about `totalBytes`,
// half compressible text-like data and half random bytes, with a few large files, executables
// and framework-style symlinks. Deterministic for a given seed, so runs are comparable.
import { closeSync, openSync, writeSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = "plugin bridge release update sparkle appcast signature archive version build notes catalog".split(" ");

function compressible(size, next) {
  const parts = [];
  let length = 0;
  while (length < size) {
    const line = `${Array.from({ length: 8 }, () => WORDS[Math.floor(next() * WORDS.length)]).join(" ")} ${Math.floor(next() * 1e6)}\n`;
    parts.push(line);
    length += line.length;
  }
  return Buffer.from(parts.join("")).subarray(0, size);
}

function random(size, next) {
  const out = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i += 4) out.writeUInt32LE(Math.floor(next() * 4294967296), i - (i + 4 > size ? i + 4 - size : 0));
  return out;
}

/** @returns {Promise<string>} the bundle folder */
export async function makeBenchBundle(root, { files = 3000, totalBytes = 400 * 1024 * 1024, seed = 7 } = {}) {
  const next = rng(seed);
  const bundle = path.join(root, "BenchPlugin.bundle");
  const contents = path.join(bundle, "Contents");
  const framework = path.join(contents, "Frameworks", "Bench.framework");
  await mkdir(path.join(framework, "Versions", "A"), { recursive: true });
  await mkdir(path.join(contents, "MacOS"), { recursive: true });
  await writeFile(path.join(contents, "Info.plist"), `<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>CFBundleIdentifier</key><string>com.example.bench</string></dict></plist>\n`);
  await symlink("A", path.join(framework, "Versions", "Current"));
  await symlink("Versions/Current/Bench", path.join(framework, "Bench"));
  const large = 4;
  const largeBytes = Math.floor(totalBytes * 0.4 / large);
  const smallBytes = Math.floor((totalBytes - largeBytes * large) / (files - large));
  for (let i = 0; i < files; i++) {
    const size = i < large ? largeBytes : Math.max(1, Math.floor(smallBytes * (0.2 + next() * 1.6)));
    const dir = path.join(contents, "Resources", `group-${String(i % 40).padStart(2, "0")}`);
    await mkdir(dir, { recursive: true });
    const data = i % 2 === 0 ? compressible(size, next) : random(size, next);
    const file = i === 0 ? path.join(framework, "Versions", "A", "Bench") : path.join(dir, `asset-${String(i).padStart(4, "0")}.bin`);
    await writeFile(file, data, { mode: i % 50 === 0 ? 0o755 : 0o644 });
  }
  return bundle;
}

/**
 * Adds `files` small files totalling about `totalBytes` below `dir` (in 100 folders of 10 sub-folders each,
 * half text-like, half random), as in a plugin that ships many small resources: the per-file costs of the
 * zip, the deltas and the tree manifest dominate, not the bytes. Deterministic for a given seed.
 */
export async function addManyFiles(dir, { files = 70_000, totalBytes = 200 * 1024 * 1024, seed = 5 } = {}) {
  const next = rng(seed);
  const average = Math.max(1, Math.floor(totalBytes / files));
  for (let i = 0; i < files; i++) {
    const folder = path.join(dir, `pack-${String(i % 100).padStart(2, "0")}`, `part-${String(Math.floor(i / 100) % 10)}`);
    if (i < 1000) await mkdir(folder, { recursive: true });
    const size = Math.max(1, Math.floor(average * (0.2 + next() * 1.6)));
    await writeFile(path.join(folder, `resource-${String(i).padStart(5, "0")}.dat`), i % 2 === 0 ? compressible(size, next) : random(size, next));
  }
}
const MiB = 1 << 20;
const POOL_BYTES = 64 * MiB;
/** Under the zip step's 16 KiB probes: every probe sees both kinds, as deflate sees every 1 MiB chunk. */
const PIECE = 4096;

/**
 * 64 MiB of content to cut files from: 4 KiB pieces, alternately random and
 * text-like (deflate shrinks the pool to about 60%). Deflate's window is
 * 32 KiB, so content repeated 64 MiB apart compresses no better than fresh
 * content, and writing 8 GiB costs copies, not generation. Pieces of 1 MiB
 * made the result a matter of luck: the 4.25 GiB model file is 68 × 64 MiB,
 * so its start, middle and end fell on the same piece, a random one, and
 * the zip step stored the file whole (a 1.39× bigger zip than Info-ZIP's).
 */
function contentPool(next) {
  const pieces = [];
  for (let i = 0; i < POOL_BYTES / PIECE; i++) pieces.push(i % 2 === 0 ? random(PIECE, next) : compressible(PIECE, next));
  return Buffer.concat(pieces);
}

/** Writes `size` bytes starting at `offset` in the pool (wrapping), after a 32-byte header unique to the file. */
function writePooled(fd, pool, size, offset, header) {
  let written = writeSync(fd, header, 0, Math.min(header.length, size));
  let at = (offset + written) % pool.length;
  while (written < size) {
    const n = Math.min(pool.length - at, size - written, 8 * MiB);
    written += writeSync(fd, pool, at, n);
    at = (at + n) % pool.length;
  }
}

/**
 * The "big plugin" of the 8 GiB bench row: `files` regular files (Info.plist included) totalling about
 * `totalBytes`, shaped like a local-inference plugin: one model file of
 * `hugeBytes` (over 4 GiB at full size: ZIP64), 32 weight shards sharing a
 * quarter of the total, and the rest small files (about 18 KiB on average,
 * 250 to a folder), plus framework symlinks and some executables. Every file
 * is cut from a 64 MiB pool of mixed random and text-like content at its own
 * offset, behind its own header. Deterministic for a given seed.
 * @returns {Promise<string>} the bundle folder
 */
export async function makeBigBundle(root, { files = 100_000, totalBytes = 8 * 1024 * MiB, hugeBytes = 4352 * MiB, seed = 37 } = {}) {
  const next = rng(seed);
  const bundle = path.join(root, "BigPlugin.bundle");
  const contents = path.join(bundle, "Contents");
  const framework = path.join(contents, "Frameworks", "Bridge.framework");
  await mkdir(path.join(framework, "Versions", "A"), { recursive: true });
  await mkdir(path.join(contents, "MacOS"), { recursive: true });
  await mkdir(path.join(contents, "Resources", "models"), { recursive: true });
  await writeFile(path.join(contents, "Info.plist"), `<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>CFBundleIdentifier</key><string>com.example.bigbench</string></dict></plist>\n`);
  await symlink("A", path.join(framework, "Versions", "Current"));
  await symlink("Versions/Current/Bridge", path.join(framework, "Bridge"));
  const pool = contentPool(next);
  const shards = Math.min(32, Math.max(1, Math.floor(files / 100)));
  const shardBytes = Math.floor(totalBytes / 4 / shards);
  const count = files - 1; // Info.plist is the other one
  const small = count - 1 - shards;
  const smallMean = Math.max(1, Math.floor((totalBytes - hugeBytes - shardBytes * shards) / small));
  const header = Buffer.alloc(32);
  let total = 0;
  let pairedShard = 0;
  for (let i = 0; i < count; i++) {
    let file;
    let size;
    if (i === 0) [file, size] = [path.join(contents, "Resources", "models", "model.gguf"), hugeBytes];
    else if (i <= shards) {
      // Sizes in pairs around shardBytes (0.5–1.5×), so the shards total shardBytes × shards.
      size = i % 2 === 0 ? 2 * shardBytes - pairedShard : i < shards ? (pairedShard = Math.floor(shardBytes * (0.5 + next()))) : shardBytes;
      file = path.join(contents, "Resources", "models", `shard-${String(i).padStart(2, "0")}.bin`);
    }
    else if (i === shards + 1) [file, size] = [path.join(framework, "Versions", "A", "Bridge"), smallMean];
    else {
      const dir = path.join(contents, "Resources", `pack-${String(Math.floor(i / 250)).padStart(3, "0")}`);
      if (i % 250 === 0 || i === shards + 2) await mkdir(dir, { recursive: true });
      [file, size] = [path.join(dir, `asset-${String(i).padStart(6, "0")}.bin`), Math.max(1, Math.floor(smallMean * (0.2 + next() * 1.6)))];
    }
    // The last small file takes up the difference, so the bundle totals totalBytes exactly.
    if (i === count - 1) size = Math.max(1, totalBytes - total);
    header.fill(0).write(`relcast bench file ${i} ${seed}`);
    const fd = openSync(file, "w", i % 50 === 0 && i > shards ? 0o755 : 0o644);
    try {
      writePooled(fd, pool, size, Math.floor(next() * pool.length), header);
    } finally {
      closeSync(fd);
    }
    total += size;
  }
  return bundle;
}
