import { printableJson } from "../core/printable.js";
import type { PublishResult } from "../api/publish.js";
import { planJson } from "../release/plan-preview.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { appendStepSummary, setOutputs, writeRunnerTempFile } from "./github-actions.js";

/**
 * The downloads' digests in `sha256sum` form ("<hex>  <name>"), the disk
 * image first, then the update archive: what the workflow's build
 * provenance attestation covers (actions/attest-build-provenance's
 * `subject-checksums`), so `gh attestation verify <download>` finds it.
 */
export function releaseChecksums(record: ReleaseRecord): string {
  const lines: string[] = [];
  if (record.sha256) lines.push(`${record.sha256}  ${record.objectStore.artifactFileName}`);
  const zip = record.autoupdate;
  if (zip?.sha256) lines.push(`${zip.sha256}  ${decodeURIComponent(new URL(zip.publicDownloadUrl).pathname.split("/").pop()!)}`);
  return lines.map((l) => l + "\n").join("");
}

/**
 * What a finished publish prints: the record (--json) or a short human
 * summary, plus Actions outputs. The public appcast URL comes first: it is
 * the value the bundle's SUFeedURL must hold.
 */
export function reportPublished(result: PublishResult, options: { json: boolean; quiet: boolean }): void {
  const { record, plan } = result;
  // A dry run sets the outputs too (the URLs the release will have), so a workflow can check them before publishing.
  const checksums = writeRunnerTempFile(`relcast-${record.pluginId}-${record.version}.sha256`, releaseChecksums(record));
  setOutputs({
    version: record.version, "appcast-url": record.publicAppcastUrl, "download-url": record.publicDownloadUrl,
    ...(checksums ? { checksums } : {}),
  });
  if (result.dryRun) {
    if (options.json) process.stdout.write(printableJson({ record, plan: planJson(plan), contents: result.preview?.contents ?? {} }, 2) + "\n");
    // The run's page says what the real publish will do (a dry run in a workflow is read there, not in the log).
    const writes = plan.writes.filter((w) => w.needed);
    appendStepSummary(summaryMarkdown(record, `${record.displayName} ${record.version}: dry run, nothing written`, [
      `### The publish would write ${writes.length} object${writes.length === 1 ? "" : "s"}${plan.mode === "noop" ? " (already published: nothing to do)" : ""}`,
      "",
      ...writes.slice(0, 100).map((w) => `- ${w.op} \`${w.key}\` (${w.step}: ${w.why})`),
      ...(writes.length > 100 ? [`- … and ${writes.length - 100} more`] : []),
      "",
    ]));
    return;
  }
  if (options.json) process.stdout.write(printableJson(record, 2) + "\n");
  // What this run wrote, by step: a re-run that finishes an interrupted publish says what it completed.
  const completed = [...new Set(plan.writes.filter((w) => w.needed).map((w) => w.step))];
  const verb =
    plan.mode === "new" ? "published"
    : completed.length === 0 ? "already published (nothing to do)"
    : `was already partly published; this run completed the interrupted publish: ${completed.join(", ")}`;
  if (plan.mode === "noop" && completed.length === 0) {
    // An identical re-run: the one thing to say.
    if (!options.quiet) process.stderr.write(`${record.pluginId} ${record.version} is already published in this store, byte for byte: nothing to do\n`);
  } else if (!options.quiet) {
    process.stderr.write(
      `${record.pluginId} ${record.version} ${verb}\n` +
        `  SUFeedURL: ${result.appcastUrl}\n` +
        `  download:  ${result.downloadUrl}\n` +
        `  store:     ${result.storeAppcastUri}\n` +
        `             ${result.storeCatalogUri}\n`,
    );
  }
  appendStepSummary(summaryMarkdown(record, `${record.displayName} ${record.version} ${verb}`));
}

/** The step summary's table of one release, then `more`, then its notes. */
function summaryMarkdown(record: ReleaseRecord, title: string, more: string[] = []): string {
  return [
    `## ${title}`,
    "",
    "| | |",
    "|---|---|",
    `| Version | ${record.version} (build ${record.autoupdate?.buildNumber ?? "-"}) |`,
    `| Channel | ${record.channel} |`,
    `| Disk image | [${record.objectStore.artifactFileName}](${record.publicDownloadUrl}), ${record.sizeBytes} bytes, sha256 \`${record.sha256 ?? "-"}\` |`,
    `| Update archive | [zip](${record.autoupdate?.publicDownloadUrl ?? ""}), ${record.autoupdate?.sizeBytes ?? "-"} bytes |`,
    `| edSignature | \`${record.autoupdate?.edSignature ?? "-"}\` |`,
    `| Appcast | ${record.publicAppcastUrl} |`,
    `| Published | ${record.publishedAtIso ?? ""} (${record.publishedAtLocal ?? ""}) |`,
    "",
    ...more,
    "### Release notes",
    "",
    // The notes as written (headings and paragraphs too): the list form alone is empty for notes without list items.
    record.releaseNotesMarkdown?.trim() || (record.releaseNotesList.length > 0 ? record.releaseNotesList.map((note) => `- ${note}`).join("\n") : record.releaseNotes.trim() || "(none)"),
    "",
  ].join("\n");
}
