// Generates the sample plugin relcast's demo, tests, bench and release
// workflow publish: a macOS-style bundle (Info.plist, executable, framework
// symlinks), a stand-in disk image and release notes. Deterministic for a
// given version, so the same version always zips to the same bytes.
import { createCipheriv, createHash } from "node:crypto";
import { chmod, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";

function plist(entries) {
  const body = Object.entries(entries)
    .map(([k, v]) => `\t<key>${k}</key>\n\t<string>${v}</string>`)
    .join("\n");
  return `<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n<plist version="1.0">\n<dict>\n${body}\n</dict>\n</plist>\n`;
}

function pseudoRandom(seed, size) {
  const out = Buffer.alloc(size);
  let block = createHash("sha256").update(seed).digest();
  for (let off = 0; off < size; off += block.length) {
    block.copy(out, off);
    block = createHash("sha256").update(block).digest();
  }
  return out;
}

/**
 * The same kind of bytes for large sizes at memory speed: an AES-256-CTR
 * keystream keyed by the seed (a SHA-256 chain costs seconds per 24 MiB,
 * and crash tests publish many such disk images).
 */
function pseudoRandomLarge(seed, size) {
  const key = createHash("sha256").update(seed).digest();
  return createCipheriv("aes-256-ctr", key, Buffer.alloc(16)).update(Buffer.alloc(size));
}

/**
 * @param {{ dir: string, version: string, build: number, publicKey?: string, name?: string, dmgBytes?: number, icon?: { file: string, bytes: Buffer }, plist?: Record<string, string> }} o
 *   icon: written to Contents/Resources/<file> and named by CFBundleIconFile; plist: more Info.plist strings.
 * @returns {Promise<{ app: string, dmg: string, notes: string }>}
 */
export async function makeSamplePlugin(o) {
  const name = o.name ?? "BridgePlugin";
  const root = path.join(o.dir, `${name}-${o.version}`);
  await rm(root, { recursive: true, force: true });
  const app = path.join(root, `${name}.bundle`);
  const contents = path.join(app, "Contents");
  const fw = path.join(contents, "Frameworks", "Bridge.framework");
  await mkdir(path.join(contents, "MacOS"), { recursive: true });
  await mkdir(path.join(contents, "Resources"), { recursive: true });
  await mkdir(path.join(fw, "Versions", "A"), { recursive: true });
  const info = {
    CFBundleIdentifier: "com.example.bridge-plugin",
    CFBundleName: name,
    CFBundleExecutable: name,
    CFBundleShortVersionString: o.version,
    CFBundleVersion: String(o.build),
    LSMinimumSystemVersion: "12.0",
  };
  if (o.publicKey) info.SUPublicEDKey = o.publicKey;
  if (o.icon) info.CFBundleIconFile = o.icon.file.replace(/\.icns$/, "");
  Object.assign(info, o.plist ?? {});
  await writeFile(path.join(contents, "Info.plist"), plist(info));
  const exe = path.join(contents, "MacOS", name);
  await writeFile(exe, `#!/bin/sh\n# ${name} ${o.version}: local inference bridge on 127.0.0.1:8765\necho "${name} ${o.version}"\n`);
  await chmod(exe, 0o755);
  await writeFile(path.join(contents, "Resources", "README.txt"), `${name} ${o.version}\n`.repeat(200));
  if (o.icon) await writeFile(path.join(contents, "Resources", o.icon.file), o.icon.bytes);
  // Like a real binary between releases: mostly the same bytes, one region rebuilt per version.
  const bridge = pseudoRandom("bridge-base", 64 * 1024);
  pseudoRandom(`bridge-${o.version}`, 4096).copy(bridge, 16 * 1024);
  await writeFile(path.join(fw, "Versions", "A", "Bridge"), bridge);
  await symlink("A", path.join(fw, "Versions", "Current"));
  await symlink("Versions/Current/Bridge", path.join(fw, "Bridge"));
  const dmg = path.join(root, `${name}-${o.version}.dmg`);
  // A stand-in for hdiutil's output (no hdiutil on Linux): bytes only, never mounted.
  await writeFile(dmg, pseudoRandomLarge(`dmg-${o.version}`, o.dmgBytes ?? 256 * 1024));
  const notes = path.join(root, "notes.md");
  await writeFile(notes, `- Bridge ${o.version} starts faster\n- Fixed reconnect after sleep\n\n* Chat history keeps 50 turns\n`);
  return { app, dmg, notes };
}
