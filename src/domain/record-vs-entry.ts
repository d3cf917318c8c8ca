import { isDeepStrictEqual } from "node:util";
import type { ReleaseRecord } from "./record-schema.js";

/**
 * A catalog entry is its release's record (`releases/<v>/release.json`,
 * written once) plus the state kept in the release's own markers, which the
 * entry carries while it lasts: the yank (`yanked`, `yankedReason`,
 * `yankedAt`, from yank.json) and a paused rollout (`rollout`, from
 * rollout.json). Those are the only fields the catalog may hold that the
 * record does not; every other field (names, notes, summary, times, URLs,
 * sizes, hashes, Sparkle options, …) must be the record's, byte for byte.
 * (`updatedAt` is written once, equal to `publishedAt`, and never moved.)
 */
export const CATALOG_ONLY_FIELDS: readonly string[] = ["yanked", "yankedReason", "yankedAt", "rollout"];

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function differences(a: unknown, b: unknown, prefix: string, out: string[]): void {
  if (isPlainObject(a) && isPlainObject(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (prefix === "" && CATALOG_ONLY_FIELDS.includes(key)) continue;
      differences(a[key], b[key], `${prefix}${key}.`, out);
    }
  } else if (!isDeepStrictEqual(a, b)) out.push(prefix.slice(0, -1));
}

/**
 * The dotted names of the fields (objects walked into, arrays compared whole)
 * in which a catalog entry and its record disagree, leaving out the
 * catalog-only state above. Empty when the entry is the record.
 */
export function recordEntryDifferences(record: ReleaseRecord, entry: ReleaseRecord): string[] {
  const out: string[] = [];
  differences(record, entry, "", out);
  return out;
}

/** A field's value as a message shows it: JSON, cut short. */
export function shownValue(value: unknown): string {
  const text = value === undefined ? "absent" : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** The value at a dotted name of {@link recordEntryDifferences}. */
export function valueAt(record: ReleaseRecord, dotted: string): unknown {
  let at: unknown = record;
  for (const key of dotted.split(".")) at = isPlainObject(at) ? at[key] : undefined;
  return at;
}
