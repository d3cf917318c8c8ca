import { printable, printableJson } from "../../core/printable.js";
import type { Command } from "commander";
import { RelcastError } from "../../core/errors.js";
import { openBundleTree } from "../../sparkle/delta/bundle-input.js";
import { applyDelta, readDeltaInfo } from "../../sparkle/delta/delta-apply.js";
import { createDelta, DEFAULT_DIFF_LIMIT_BYTES } from "../../sparkle/delta/delta-create.js";
import { compressionUnavailable, defaultCompression, missingProgramError } from "../../sparkle/delta/delta-codec.js";
import { MAX_DIFF_FILE_BYTES } from "../../sparkle/delta/delta-limits.js";
import { wholeFilesNotes } from "../../sparkle/delta/whole-files-note.js";
import { COMPRESSION_NAMES, Command as ItemCommand, type CompressionName } from "../../sparkle/delta/delta-format.js";

function compressionFlag(value: string | undefined): CompressionName {
  if (value === undefined) return defaultCompression();
  if (!(COMPRESSION_NAMES as readonly string[]).includes(value)) throw new RelcastError("E_USAGE", `--compression must be one of ${COMPRESSION_NAMES.join(", ")}, got "${value}"`, "lzma is Sparkle's default; zlib needs no program");
  if (compressionUnavailable(value as CompressionName)) throw missingProgramError(value as CompressionName);
  return value as CompressionName;
}

function commandNames(bits: number): string {
  const names = Object.entries(ItemCommand).filter(([name, bit]) => name !== "end" && bits & bit).map(([name]) => name);
  return names.join("+");
}

/**
 * `relcast delta create|apply|info`: Sparkle binary deltas by hand, for testing
 * and for release engineers who want to check a patch. OLD/NEW are bundle
 * folders or zips.
 */
export function registerDelta(program: Command): void {
  const delta = program.command("delta").description("create, apply or inspect Sparkle binary delta updates");
  delta
    .command("create")
    .description("make a delta that turns OLD into NEW (folders or zips)")
    .argument("<old>", "the old bundle (folder or zip)")
    .argument("<new>", "the new bundle (folder or zip)")
    .argument("<out>", "the .delta file to write")
    .option("--compression <mode>", "lzma (Sparkle's default; needs xz), zlib (no program needed), bzip2 (needs bzip2) or none; default: lzma where xz is on the PATH, else zlib")
    .option("--diff-limit-mib <n>", `changed files larger than this are shipped whole instead of diffed (default ${DEFAULT_DIFF_LIMIT_BYTES / 1048576}, at most ${MAX_DIFF_FILE_BYTES / 1048576}); whole files of any size are streamed`)
    .action(async (oldInput: string, newInput: string, out: string, flags: { compression?: string; diffLimitMib?: string }) => {
      const compression = compressionFlag(flags.compression);
      const limitMib = flags.diffLimitMib === undefined ? undefined : Number(flags.diffLimitMib);
      if (limitMib !== undefined && !(Number.isFinite(limitMib) && limitMib >= 0 && limitMib * 1048576 <= MAX_DIFF_FILE_BYTES)) {
        throw new RelcastError(
          "E_USAGE",
          `--diff-limit-mib must be a number from 0 to ${MAX_DIFF_FILE_BYTES / 1048576}, got "${flags.diffLimitMib}"`,
          "a diff holds both files and a suffix array in memory (about 6 times the file); larger changed files are shipped whole anyway, e.g. --diff-limit-mib 24",
        );
      }
      const oldTree = await openBundleTree(oldInput, "old");
      try {
        const newTree = await openBundleTree(newInput, "new");
        try {
          const s = await createDelta(oldTree.root, newTree.root, out, { compression, diffLimitBytes: limitMib === undefined ? undefined : Math.floor(limitMib * 1048576) });
          const c = s.counts;
          process.stdout.write(
            `wrote ${out} (${s.size} bytes, ${compression})\n` +
              `  before ${s.beforeHash}\n  after  ${s.afterHash}\n` +
              `  ${c.diffed} diffed, ${c.extracted} extracted, ${c.cloned} cloned, ${c.deleted} deleted, ${c.permissions} permission changes` +
              (c.wholeOverLimit ? `, ${c.wholeOverLimit} shipped whole (over the diff limit)` : "") +
              "\n" +
              wholeFilesNotes(s)
                .map((line) => `  ${line}\n`)
                .join(""),
          );
        } finally {
          await newTree.dispose();
        }
      } finally {
        await oldTree.dispose();
      }
    });
  delta
    .command("apply")
    .description("apply DELTA to OLD (folder or zip), writing the new bundle folder OUT; checks both tree hashes")
    .argument("<old>", "the old bundle (folder or zip)")
    .argument("<out>", "the folder to create for the new bundle (must not exist)")
    .argument("<delta>", "the .delta file")
    .action(async (oldInput: string, out: string, deltaFile: string) => {
      const oldTree = await openBundleTree(oldInput, "old");
      try {
        const r = await applyDelta(oldTree.root, out, deltaFile);
        process.stdout.write(`wrote ${out}: ${r.items} items applied, tree hash ${r.header.afterHash} as the delta promises\n`);
      } finally {
        await oldTree.dispose();
      }
    });
  delta
    .command("info")
    .description("print a delta's header and items")
    .argument("<delta>", "the .delta file")
    .option("--json", "print JSON")
    .action(async (deltaFile: string, flags: { json?: boolean }) => {
      const { header, items } = await readDeltaInfo(deltaFile);
      if (flags.json) {
        process.stdout.write(`${printableJson({ header, items }, 2)}\n`);
        return;
      }
      process.stdout.write(
        `Sparkle delta version ${header.majorVersion}.${header.minorVersion}, ${header.compression} compression (level ${header.compressionLevel})\n` +
          `before tree hash ${header.beforeHash}\nafter tree hash  ${header.afterHash}\n${items.length} items:\n`,
      );
      for (const item of items) {
        const extra = [item.clonedFrom ? `from ${item.clonedFrom}` : "", item.mode ? `mode 0${item.mode.toString(8)}` : "", item.dataLength ? `${item.dataLength} bytes` : ""].filter(Boolean).join(", ");
        process.stdout.write(`  ${commandNames(item.commands).padEnd(28)} ${printable(item.rel)}${extra ? `  (${extra})` : ""}\n`);
      }
    });
}
