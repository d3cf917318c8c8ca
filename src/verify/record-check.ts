import { isDeepStrictEqual } from "node:util";
import { releaseRecordSchema, type ReleaseRecord } from "../domain/record-schema.js";
import { recordKey } from "../domain/release-layout.js";
import type { ObjectStore } from "../store/object-store.js";

/** The fields that pin a release's bytes; yank state and `updatedAt` may change, these never do. */
function identity(r: ReleaseRecord): unknown {
  const au = r.autoupdate;
  return {
    version: r.version, channel: r.channel, sizeBytes: r.sizeBytes, sha256: r.sha256, objectPath: r.objectStore.objectPath, icon: r.icon,
    autoupdate: au ? { buildNumber: au.buildNumber, edSignature: au.edSignature, sizeBytes: au.sizeBytes, sha256: au.sha256, publicDownloadUrl: au.publicDownloadUrl } : undefined,
  };
}

/** The immutable `releases/<v>/release.json` exists, parses, and pins the same bytes as the catalog entry. */
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
  return isDeepStrictEqual(identity(parsed.data), identity(entry)) ? [] : [`record ${key} and the catalog entry name different artifacts`];
}
