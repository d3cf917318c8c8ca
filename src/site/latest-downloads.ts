import { z } from "zod";
import { expectedLatest } from "../domain/latest-choice.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { downloadKey, latestDownloadName, latestDownloadStateKey, versionedKey, zipFileName } from "../domain/release-layout.js";
import { contentTypeFor } from "../store/content-types.js";
import type { ObjectStore } from "../store/object-store.js";
import { putIfChanged, transferObject } from "./transfer-object.js";

const stateSchema = z.object({ version: z.string(), dmgSha256: z.string().optional(), zipSha256: z.string().optional() });

function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The stable latest URLs `downloads/<id>-latest.dmg|.zip`: copies of the
 * catalog's latest stable release. A small state object, written after the
 * copies, says which version they hold, so an unchanged latest costs one read.
 */
export async function syncLatestDownloads(source: ObjectStore, target: ObjectStore, pluginId: string, records: readonly ReleaseRecord[], cacheControl: string): Promise<string[]> {
  const want = expectedLatest(records);
  const stateKey = latestDownloadStateKey(pluginId);
  const names = { dmg: latestDownloadName(pluginId, "dmg"), zip: latestDownloadName(pluginId, "zip") };
  const current = await target.get(stateKey);
  const state = current ? stateSchema.safeParse(parseJsonOrUndefined(current.body.toString("utf8"))) : undefined;
  if (!want) {
    for (const key of [downloadKey(names.dmg), downloadKey(names.zip), stateKey]) await target.delete(key);
    return current ? ["removed the latest downloads (no stable release)"] : [];
  }
  const heads = await Promise.all([target.head(downloadKey(names.dmg)), want.autoupdate ? target.head(downloadKey(names.zip)) : undefined]);
  if (state?.success && state.data.version === want.version && heads[0] && (!want.autoupdate || heads[1])) return [];
  const done: string[] = [];
  const options = (name: string) => ({ contentType: contentTypeFor(name), cacheControl });
  if (await transferObject(source, target, versionedKey(want.version, want.objectStore.artifactFileName), downloadKey(names.dmg), options(names.dmg))) done.push(`${downloadKey(names.dmg)} is ${want.version}`);
  if (want.autoupdate) {
    if (await transferObject(source, target, versionedKey(want.version, zipFileName(pluginId, want.version)), downloadKey(names.zip), options(names.zip))) done.push(`${downloadKey(names.zip)} is ${want.version}`);
  } else {
    await target.delete(downloadKey(names.zip));
  }
  const next = { version: want.version, ...(want.sha256 && { dmgSha256: want.sha256 }), ...(want.autoupdate?.sha256 && { zipSha256: want.autoupdate.sha256 }) };
  await putIfChanged(target, stateKey, JSON.stringify(next, null, 2) + "\n", { contentType: "application/json", cacheControl });
  return done;
}
