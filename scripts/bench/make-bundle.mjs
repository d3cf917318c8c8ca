// Generates a plugin bundle for the zip benchmark: `files` files totalling about `totalBytes`,
// half compressible text-like data and half random bytes, with a few large files, executables
// and framework-style symlinks. Deterministic for a given seed, so runs are comparable.
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
