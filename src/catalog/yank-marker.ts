import { RelcastError } from "../core/errors.js";
import { parseStoredJson } from "../core/stored-json.js";
import { yankKey } from "../domain/release-layout.js";
import { yankMarkerSchema, type YankMarker } from "../domain/record-schema.js";
import type { ObjectStore } from "../store/object-store.js";

/** Reads `releases/<v>/yank.json`; a damaged marker is an error, never silently "not yanked". */
export async function readYankMarker(store: ObjectStore, version: string): Promise<YankMarker | undefined> {
  const got = await store.get(yankKey(version));
  if (!got) return undefined;
  const marker = parseStoredJson(got.body, yankMarkerSchema);
  if (!marker) {
    throw new RelcastError("E_CATALOG", `the yank marker ${store.uriFor(yankKey(version))} is not valid`, `run \`relcast unyank ${version}\` or \`relcast yank ${version}\` again to rewrite it`);
  }
  return marker;
}
