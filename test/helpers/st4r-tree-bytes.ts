import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { walkFiles } from "./walk-files.js";

/**
 * Every file under a folder with the SHA-256 of its bytes (no times, unlike snapshotTree): equal results mean a
 * store put back by hand after a fault holds exactly what it held before, so a check already made on that state
 * need not run again.
 */
export async function treeBytes(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const p of walkFiles(root)) out[path.relative(root, p)] = createHash("sha256").update(await readFile(p)).digest("hex");
  return out;
}
