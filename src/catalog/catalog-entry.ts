import type { ReleaseRecord } from "../domain/record-schema.js";
import { isYanked } from "../domain/yank-state.js";

/** What a publish needs to know of every release: small, so 10,000 of them cost little. */
export interface CatalogEntry {
  version: string;
  channel: string;
  build: string | undefined;
  publishedAt: ReleaseRecord["publishedAt"];
  yanked: boolean;
}

/**
 * A catalog as a publish sees it (from the catalog index, or the catalog parsed in full): a summary of
 * every entry (catalog order) and the full records of only those a publish
 * writes from: the newest {@link PAGE_RELEASES} (index.html), the appcast's
 * selection (the highest builds of each channel), the expected latest
 * release and every yanked one. Memory and time stay flat in the history.
 */
export interface CatalogView {
  etag: string;
  pluginId: string;
  count: number;
  entries: CatalogEntry[];
  /** Full records, in catalog order (a subset of the catalog, see above). */
  records: ReleaseRecord[];
  /** Byte offset of the first entry in the file the view was read from (a newest release is inserted there). */
  firstOffset?: number | undefined;
}

export function entryOf(record: ReleaseRecord): CatalogEntry {
  return {
    version: record.version, channel: record.channel, build: record.autoupdate ? String(record.autoupdate.buildNumber) : undefined,
    publishedAt: record.publishedAt, yanked: isYanked(record),
  };
}
