import type { ReleaseRecord } from "./record-schema.js";

export type PlannedAction = "create" | "skip-identical" | "update-cas" | "copy" | "delete-older" | "public-copy" | "site-sync";

export interface PlannedWrite {
  key: string;
  action: PlannedAction;
  sizeBytes?: number;
  contentType: string;
  cacheControl: string;
  /** Local file or in-memory body to write; absent for copies and deletes. */
  source?: { file: string } | { text: string };
  copyFrom?: string;
}

/**
 * Everything a publish will do, computed without side effects: `--dry-run`
 * prints it, the upload steps apply it.
 */
export interface ReleasePlan {
  version: string;
  /** "new": nothing stored yet; "resume": some objects of this exact release exist; "noop": all exist. */
  mode: "new" | "resume" | "noop";
  record: ReleaseRecord;
  writes: PlannedWrite[];
  latest: { update: boolean; reason: string };
}

export function formatPlan(plan: ReleasePlan): string {
  const lines = [`plan for ${plan.version} (${plan.mode}):`];
  for (const w of plan.writes) {
    const size = w.sizeBytes !== undefined ? `${w.sizeBytes} B` : "";
    lines.push(`  ${w.action.padEnd(14)} ${w.key}  ${size}  ${w.contentType}  [${w.cacheControl}]`.replace(/\s+$/, ""));
  }
  lines.push(`  latest: ${plan.latest.reason}`);
  return lines.join("\n");
}
