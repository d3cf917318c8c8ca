/** A bundle given as a folder or as a zip (unpacked to a scratch folder that `dispose` removes). */
import { mkdtemp, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { RelcastError } from "../../core/errors.js";
import { removeTree } from "../../core/remove-tree.js";
import { extractBundleZip } from "./zip-tree.js";

export interface BundleTree {
  root: string;
  dispose(): Promise<void>;
}

export async function openBundleTree(input: string, what: string, tmpDir: string = os.tmpdir()): Promise<BundleTree> {
  let info;
  try {
    info = await stat(input);
  } catch {
    throw new RelcastError("E_INPUT", `The ${what} bundle ${input} does not exist.`, "Pass a bundle folder or the zip relcast made of it.");
  }
  if (info.isDirectory()) return { root: path.resolve(input), dispose: async () => undefined };
  if (!info.isFile()) throw new RelcastError("E_INPUT", `The ${what} bundle ${input} is neither a folder nor a zip.`, "Pass a bundle folder or a .zip.");
  const scratch = await mkdtemp(path.join(tmpDir, "relcast-tree-"));
  try {
    return { root: await extractBundleZip(input, scratch), dispose: () => removeTree(scratch) };
  } catch (err) {
    await removeTree(scratch);
    throw err;
  }
}
