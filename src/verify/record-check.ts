import { releaseRecordSchema, type ReleaseRecord } from "../domain/record-schema.js";
import { recordKey } from "../domain/release-layout.js";
import { recordEntryDifferences, shownValue, valueAt } from "../domain/record-vs-entry.js";
import type { ObjectStore } from "../store/object-store.js";
import { recordConsistencyProblems } from "./record-consistency.js";

/** At most this many differing fields are named one by one (a record from another release differs in dozens). */
const NAMED_FIELDS = 8;

/**
 * The immutable `releases/<v>/release.json` exists, parses, says in itself
 * what its parts say (notes, times), and is the catalog entry in every field
 * but the yank and rollout state: a record edited after publishing (or a
 * hand-edited catalog) is named field by field, never passed.
 */
export async function recordProblems(store: ObjectStore, entry: ReleaseRecord): Promise<string[]> {
  const key = recordKey(entry.version);
  const got = await store.get(key);
  if (!got) return [`record ${key} is missing (relcast rebuild could not restore this release)`];
  let raw: unknown;
  try {
    raw = JSON.parse(got.body.toString("utf8"));
  } catch {
    return [`record ${key} is not valid JSON`];
  }
  const parsed = releaseRecordSchema.safeParse(raw);
  if (!parsed.success) return [`record ${key} is not a valid release record`];
  const record = parsed.data;
  const problems = recordConsistencyProblems(record).map((p) => `record ${key}: ${p}`);
  const fields = recordEntryDifferences(record, entry);
  if (fields.length > 0) {
    const named = fields.slice(0, NAMED_FIELDS).map((f) => `${f} (record ${shownValue(valueAt(record, f))}, catalog ${shownValue(valueAt(entry, f))})`);
    const more = fields.length > NAMED_FIELDS ? ` and ${fields.length - NAMED_FIELDS} more` : "";
    problems.push(
      `record ${key} and the catalog entry disagree in ${named.join(", ")}${more}: records are written once at publish, so one of them was edited ` +
        "(restore the record from a backup, or republish; relcast rebuild would copy the record's values into the catalog and feeds)",
    );
  }
  return problems;
}
