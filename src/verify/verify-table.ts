import { printable } from "../core/printable.js";
import { CHECK_COLUMNS, rowProblems, type CheckResult, type ReleaseRow } from "./release-row.js";
import type { VerifyReport } from "./verify-store.js";

const HEADERS: Record<(typeof CHECK_COLUMNS)[number], string> = {
  record: "record", dmg: "dmg", zip: "zip", signature: "sig", plist: "plist", zipRules: "rules", deltas: "deltas", appcast: "appcast", order: "order",
};

function cell(result: CheckResult, row: ReleaseRow, column: string): string {
  if (column === "appcast" && row.yanked && result.ok) return "yanked";
  if (column === "appcast" && row.paused && result.ok) return "paused";
  if (!result.ok) return "FAIL";
  return result.skipped ? "-" : "ok";
}

function pad(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd());
}

/** Warning lines the human report prints before it counts the rest. */
export const MAX_WARNING_LINES = 20;

/** The human report: one line per release, then every problem prefixed with the release it belongs to. */
export function formatVerifyReport(report: VerifyReport): string {
  const lines: string[] = [];
  const head = ["version", "channel", "build", ...CHECK_COLUMNS.map((c) => HEADERS[c])];
  const body = report.releases.map((row) => [row.version, row.channel, row.build, ...CHECK_COLUMNS.map((c) => cell(row.checks[c], row, c))]);
  lines.push(...pad([head, ...body]));
  lines.push("");
  lines.push(`latest: ${report.latest.version ?? "(no stable release)"} ${report.latest.problems.length === 0 ? "ok" : "FAIL"}`);
  lines.push(`feed: ${report.feed.length === 0 ? "ok" : "FAIL"}`);
  lines.push(`site: ${report.site.problems.length === 0 ? "ok" : "FAIL"}`);
  lines.push(`store: ${report.store.length === 0 ? "ok" : "FAIL"}`);
  const linked = report.checked.sameFile > 0 ? ` (${report.checked.sameFile} of them the very file of one already hashed, a hard-link copy, so not read twice)` : "";
  lines.push(`checked ${report.checked.objects} object(s), ${report.checked.bytes} bytes: SHA-256 and size compared with the records${linked}`);
  const problems = [
    ...report.store.map((p) => `store: ${p}`),
    ...report.feed.map((p) => `feed: ${p}`),
    ...report.latest.problems.map((p) => `latest: ${p}`),
    ...report.site.problems.map((p) => `site: ${p}`),
    ...report.releases.flatMap((row) => rowProblems(row).map((p) => `${row.version}: ${p}`)),
  ];
  const warnings = [...report.storeWarnings.map((w) => `store: ${w}`), ...report.latest.warnings.map((w) => `latest: ${w}`), ...report.site.warnings.map((w) => `site: ${w}`)];
  // A store of thousands of stray folders would print thousands of lines: the first ones, then how many more (--json has all).
  if (warnings.length > 0) {
    lines.push("", "warnings:", ...warnings.slice(0, MAX_WARNING_LINES).map((w) => `  ${w}`));
    if (warnings.length > MAX_WARNING_LINES) lines.push(`  … and ${warnings.length - MAX_WARNING_LINES} more warning(s): \`relcast verify --json\` lists them all`);
  }
  if (problems.length > 0) lines.push("", `${problems.length} problem(s):`, ...problems.map((p) => `  ${p}`));
  else lines.push("", `${report.releases.length} release(s) verified, no problems`);
  // Problems quote keys, folder names and link targets read from the store: each stays one printable line.
  return lines.map((line) => printable(line)).join("\n") + "\n";
}

/** Which releases (or "feed", "latest") have problems, for the one-line error. */
export function failingNames(report: VerifyReport): string[] {
  return [
    ...(report.feed.length > 0 ? ["feed"] : []),
    ...(report.latest.problems.length > 0 ? ["latest"] : []),
    ...(report.site.problems.length > 0 ? ["site"] : []),
    ...(report.store.length > 0 ? ["store"] : []),
    ...report.releases.filter((r) => rowProblems(r).length > 0).map((r) => r.version),
  ];
}
