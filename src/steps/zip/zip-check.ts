import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { RelcastError } from "../../core/errors.js";
import { readZipListing } from "../../sparkle/zip-listing.js";
import { zipRuleProblems } from "../../sparkle/zip-rules.js";

/**
 * Reads the zip just written (not the folder it came from) and refuses the
 * release when it breaks Sparkle's archive rules or lost a symlink: the
 * check an independent unzipper would make, before anything is uploaded.
 */
export async function assertZipFollowsRules(zipFile: string, bundleDir: string, symlinks: ReadonlyArray<{ name: string; target: string }>): Promise<void> {
  // Read through cached blocks (a few large reads), not yauzl's two small reads an entry: a bundle of 70,000 files.
  const size = (await stat(zipFile)).size;
  const { entries } = await readZipListing({ size, openRange: async (start, end) => createReadStream(zipFile, { start, end: end - 1 }) });
  const problems = zipRuleProblems(entries);
  const byName = new Map(entries.map((e) => [e.name, e]));
  for (const link of symlinks) {
    const entry = byName.get(link.name);
    if (entry?.kind !== "symlink" || entry.target !== link.target) problems.push(`symlink ${link.name} -> ${link.target} is not stored as that symlink in the zip`);
  }
  if (problems.length === 0) return;
  throw new RelcastError(
    "E_INPUT",
    `the update zip of ${bundleDir} breaks Sparkle's archive rules: ${problems[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ""}`,
    "fix the bundle: keep every symlink inside the bundle and framework aliases as symlinks, then publish again",
  );
}
