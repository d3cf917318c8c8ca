import { readFile } from "node:fs/promises";
import { createTwoFilesPatch } from "diff";
import { APPCAST_KEY, CATALOG_KEY } from "../domain/release-layout.js";
import type { PlannedWrite, PutWrite, ReleasePlan } from "../domain/release-plan.js";
import type { ObjectStore } from "../store/object-store.js";

/**
 * What a dry run shows besides the plan: the new contents of every planned
 * text object (the exact bytes the publish would write, as UTF-8) and what
 * the store holds now at the feeds' keys. Read while the plan's files exist.
 */
export interface PlanPreview {
  /** key → new contents, for every put of JSON, XML or HTML. */
  contents: Record<string, string>;
  /** key → current contents (null: not there) of catalog and appcast. */
  current: Record<string, string | null>;
}

const isText = (w: PutWrite) => /json|xml|html/.test(w.contentType);

async function textOf(w: PutWrite): Promise<string> {
  if (w.source.kind === "file") return readFile(w.source.file, "utf8");
  if (w.source.kind === "bytes") return w.source.bytes.toString("utf8");
  return w.source.template;
}

export async function previewPlan(store: ObjectStore, plan: ReleasePlan): Promise<PlanPreview> {
  const contents: Record<string, string> = {};
  for (const w of plan.writes) if (w.op === "put" && isText(w)) contents[w.key] = await textOf(w);
  const current: Record<string, string | null> = {};
  for (const key of [APPCAST_KEY, CATALOG_KEY]) current[key] = (await store.get(key))?.body.toString("utf8") ?? null;
  return { contents, current };
}

/** Unified diffs of appcast.xml and the catalog against the store's current files ("" when unchanged). */
export function feedDiffs(preview: PlanPreview): string {
  return [APPCAST_KEY, CATALOG_KEY]
    .map((key) => {
      const before = preview.current[key] ?? "";
      const after = preview.contents[key] ?? before;
      if (before === after) return `${key}: unchanged\n`;
      return createTwoFilesPatch(preview.current[key] === null ? "/dev/null" : `a/${key}`, `b/${key}`, before, after, "store now", "after this publish");
    })
    .join("");
}

/** The plan as JSON: every write without its bytes (those are in the preview's contents). */
export function planJson(plan: ReleasePlan): unknown {
  const write = (w: PlannedWrite) => {
    if (w.op !== "put") return w;
    const { source, ...rest } = w;
    return { ...rest, source: source.kind === "file" ? { kind: "file", file: source.file } : { kind: source.kind } };
  };
  return { title: plan.title, mode: plan.mode, latest: plan.latest, writes: plan.writes.map(write) };
}
