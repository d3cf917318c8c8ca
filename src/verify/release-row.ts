/** The outcome of one check of one release. `skipped`: could not be run (shown as "-"). */
export interface CheckResult {
  ok: boolean;
  problems: string[];
  skipped?: boolean;
}

export const CHECK_COLUMNS = ["record", "dmg", "zip", "signature", "plist", "zipRules", "deltas", "appcast", "order"] as const;
export type CheckColumn = (typeof CHECK_COLUMNS)[number];

/** One line of the verify table: a release and what each check found. */
export interface ReleaseRow {
  version: string;
  channel: string;
  build: string;
  yanked: boolean;
  /** A paused phased rollout: left out of the appcast on purpose. */
  paused?: boolean;
  checks: Record<CheckColumn, CheckResult>;
}

export function rowProblems(row: ReleaseRow): string[] {
  return CHECK_COLUMNS.flatMap((c) => row.checks[c].problems);
}

export function outcome(problems: string[] = []): CheckResult {
  return { ok: problems.length === 0, problems };
}

export const NOT_RUN: CheckResult = { ok: true, problems: [], skipped: true };
