import { createHash } from "node:crypto";
import { chmod, mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";

/** Incompressible but fixed bytes: SHA-256 of a counter. */
function fixedNoise(length: number, seed: string): Buffer {
  const out = Buffer.alloc(length);
  for (let at = 0, i = 0; at < length; at += 32, i++) createHash("sha256").update(`${seed}:${i}`).digest().copy(out, at);
  return out;
}

/** A small bundle whose every byte is fixed (text, fixed noise, an executable, links, a non-ASCII name). */
export async function makeFixedBundle(root: string): Promise<string> {
  const bundle = path.join(root, "Fixed.bundle");
  const text = Buffer.from(Array.from({ length: 40_000 }, (_, i) => `line ${i % 613} of a resource that compresses, ${i % 7}\n`).join(""));
  const files: Record<string, Buffer> = {
    "Contents/Info.plist": Buffer.from("<plist><dict><key>CFBundleVersion</key><string>1</string></dict></plist>\n"),
    "Contents/MacOS/Fixed": Buffer.from("#!/bin/sh\necho fixed\n"),
    "Contents/Resources/text.txt": text,
    "Contents/Resources/noise.bin": fixedNoise(3 * (1 << 20) + 4321, "noise"),
    "Contents/Resources/large-noise.bin": fixedNoise(5 * (1 << 20) + 99, "large"),
    "Contents/Resources/empty": Buffer.alloc(0),
    "Contents/Resources/Überblick – café.txt": Buffer.from("non-ASCII name\n"),
    "Contents/Frameworks/B.framework/Versions/A/B": Buffer.from("binary"),
  };
  for (const [rel, data] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(bundle, rel)), { recursive: true });
    await writeFile(path.join(bundle, rel), data);
  }
  await chmod(path.join(bundle, "Contents/MacOS/Fixed"), 0o755);
  await symlink("A", path.join(bundle, "Contents/Frameworks/B.framework/Versions/Current"));
  await symlink("Versions/Current/B", path.join(bundle, "Contents/Frameworks/B.framework/B"));
  return bundle;
}
