import type { ReleaseRecord } from "./record-schema.js";

/**
 * The plan: every write of a release, a yank, a rebuild or a site sync, as
 * data (terraform's plan, changesets' release plan). It is computed by
 * reading the store and writing nothing; `--dry-run` prints it; the apply
 * steps carry it out write by write and decide nothing of their own.
 */

/** The apply steps, in order. Each write names the step that carries it out. */
export const APPLY_STEP_NAMES = ["upload", "record", "downloads", "latest", "feeds", "site"] as const;
export type ApplyStepName = (typeof APPLY_STEP_NAMES)[number];

/** Placeholder in a stamped source for the ETag another write of the plan returns. */
export const ETAG_PLACEHOLDER = "(the ETag this write returns)";

/**
 * What a put writes: a local file (artifacts, a merged catalog), or the exact
 * bytes. A stamped source is the one kind whose bytes depend on another
 * write's answer: the catalog index names the ETag the catalog write returns,
 * filled in as the JSON string {@link ETAG_PLACEHOLDER} when it is written.
 */
export type ContentSource =
  /** handOver: the file is this run's own (its work folder) and nothing changes it after: a folder store may keep it as the object instead of copying. */
  | { kind: "file"; file: string; handOver?: boolean }
  | { kind: "bytes"; bytes: Buffer }
  /** seal: turns the stamped text into the bytes written (the catalog index is signed once its ETag is in). */
  | { kind: "stamped"; template: string; etagOf: string; seal?: ((stamped: string) => Promise<string>) | undefined };

/**
 * create-only: If-None-Match: * for immutable objects (records, artifacts; losing to the same bytes is fine);
 * if-match: compare-and-swap on the ETag read while planning (null: the object was not there, If-None-Match: *);
 * a lost compare-and-swap is re-planned. overwrite: last writer wins (pages and copies derived from the feeds).
 */
export type Precondition = { kind: "create-only" } | { kind: "if-match"; etag: string | null } | { kind: "overwrite" };

interface WriteBase {
  step: ApplyStepName;
  key: string;
  /** False when the store already holds exactly this: listed in the plan, not carried out. */
  needed: boolean;
  /** Why, for the printed plan ("new", "identical", "older than 1.3.0", ...). */
  why: string;
}

export interface PutWrite extends WriteBase {
  op: "put";
  source: ContentSource;
  sizeBytes?: number | undefined;
  /** Hex SHA-256 of the bytes (known for files and bytes): a lost create-only race to the same bytes is no conflict. */
  sha256?: string | undefined;
  contentType: string;
  cacheControl: string;
  precondition: Precondition;
}

export interface CopyWrite extends WriteBase {
  op: "copy";
  /** Key in the source store (the same store, except for `relcast site build`). */
  from: string;
  contentType: string;
  cacheControl: string;
  /** The source's size and ETag as a repair hashed it: exactly that version is copied, or nothing (`site sync --repair`). */
  pinned?: { size: number; etag: string };
}

export interface DeleteWrite extends WriteBase {
  op: "delete";
}

export type PlannedWrite = PutWrite | CopyWrite | DeleteWrite;

/** What the planned feeds were computed from and will leave behind. */
export interface FeedsState {
  /** ETags the feeds were read at (undefined: not there yet). */
  catalogEtag: string | undefined;
  appcastEtag: string | undefined;
}

export interface ReleasePlan {
  /** "publish 1.2.0", "yank 1.2.0", "rebuild", "site sync". */
  title: string;
  /** Publish only. "new": nothing stored yet; "resume": some objects of this exact release exist; "noop": all exist. */
  mode?: "new" | "resume" | "noop";
  record?: ReleaseRecord;
  latest?: { update: boolean; reason: string };
  writes: PlannedWrite[];
}

export function writesOf(plan: ReleasePlan, step: ApplyStepName): PlannedWrite[] {
  return plan.writes.filter((w) => w.step === step);
}

/** Replaces the writes of some steps (a re-plan after a lost compare-and-swap). */
export function withWrites(plan: ReleasePlan, steps: readonly ApplyStepName[], writes: readonly PlannedWrite[]): ReleasePlan {
  return { ...plan, writes: [...plan.writes.filter((w) => !steps.includes(w.step)), ...writes] };
}

/** The action word of a write, as the printed plan shows it. */
export function actionOf(w: PlannedWrite): string {
  if (!w.needed) return "skip-identical";
  if (w.op === "delete") return "delete";
  if (w.op === "copy") return "copy";
  return w.precondition.kind === "create-only" ? "create" : w.precondition.kind === "if-match" ? "update-cas" : "write";
}

function detail(w: PlannedWrite): string {
  if (w.op === "delete") return "";
  const size = w.op === "put" && w.sizeBytes !== undefined ? `${w.sizeBytes} B  ` : "";
  const from = w.op === "copy" ? `from ${w.from}  ` : w.source.kind === "file" ? "" : w.source.kind === "stamped" ? `stamped with the ETag of ${w.source.etagOf}  ` : "";
  const cas = w.op === "put" && w.precondition.kind === "if-match" ? (w.precondition.etag === null ? "  if-none-match *" : `  if-match ${w.precondition.etag}`) : "";
  return `${size}${from}${w.contentType}  [${w.cacheControl}]${cas}`;
}

/** The plan as text, one line a write, grouped by the step that carries it out. */
export function formatPlan(plan: ReleasePlan): string {
  const lines = [`plan for ${plan.title}${plan.mode ? ` (${plan.mode})` : ""}:`];
  for (const step of APPLY_STEP_NAMES) {
    const writes = writesOf(plan, step);
    if (writes.length === 0) continue;
    lines.push(`  ${step}:`);
    for (const w of writes) lines.push(`    ${actionOf(w).padEnd(14)} ${w.key}  ${detail(w)}  (${w.why})`.replace(/\s+\(/, "  ("));
  }
  if (plan.latest) lines.push(`  latest: ${plan.latest.reason}`);
  return lines.join("\n");
}
