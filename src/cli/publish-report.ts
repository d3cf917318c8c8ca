import type { ReleaseContext } from "../steps/release-context.js";
import { appendStepSummary, setOutputs } from "./github-actions.js";

/** What a finished publish prints: the record (--json) or a short human summary, plus Actions outputs. */
export function reportPublished(ctx: ReleaseContext, options: { json: boolean }): void {
  const record = ctx.record!;
  const plan = ctx.plan!;
  if (options.json) process.stdout.write(JSON.stringify(record, null, 2) + "\n");
  if (ctx.inputs.dryRun) return;
  const verb = plan.mode === "noop" ? "already published (nothing to do)" : plan.mode === "resume" ? "published (resumed)" : "published";
  process.stderr.write(`${record.pluginId} ${record.version} ${verb}\n  appcast: ${ctx.store.uriFor("releases/appcast.xml")}\n  catalog: ${ctx.store.uriFor("releases/catalog.json")}\n`);
  setOutputs({ version: record.version, "appcast-url": record.publicAppcastUrl, "download-url": record.publicDownloadUrl });
  appendStepSummary(
    [
      `## ${record.displayName} ${record.version} ${verb}`,
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
      "### Release notes",
      "",
      ...record.releaseNotesList.map((note) => `- ${note}`),
      "",
    ].join("\n"),
  );
}
