import type { ReleaseRecord } from "../domain/record-schema.js";
import { isReleaseVersion } from "../domain/record-fields.js";
import { isYanked } from "../domain/yank-state.js";

/** What a publish needs to know of every release. */
export interface CatalogEntry {
  version: string;
  channel: string;
  build: string | undefined;
  publishedAt: ReleaseRecord["publishedAt"];
  yanked: boolean;
}

export function entryOf(record: ReleaseRecord): CatalogEntry {
  return {
    version: record.version, channel: record.channel, build: record.autoupdate ? String(record.autoupdate.buildNumber) : undefined,
    publishedAt: record.publishedAt, yanked: isYanked(record),
  };
}

type Row = [version: string, channel: string, build: string | null, seconds: number, nanoseconds: number, yanked: 0 | 1];

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);

const isRow = (r: unknown): r is Row =>
  Array.isArray(r) && r.length === 6 && typeof r[0] === "string" && isReleaseVersion(r[0]) && typeof r[1] === "string" && (r[2] === null || typeof r[2] === "string")
  && isInt(r[3]) && isInt(r[4]) && (r[5] === 0 || r[5] === 1);

const entryOfRow = ([version, channel, build, seconds, nanoseconds, yanked]: Row): CatalogEntry =>
  ({ version, channel, build: build ?? undefined, publishedAt: { _seconds: seconds, _nanoseconds: nanoseconds }, yanked: yanked === 1 });

const rowText = (e: CatalogEntry): string => JSON.stringify([e.version, e.channel, e.build ?? null, e.publishedAt._seconds, e.publishedAt._nanoseconds, e.yanked ? 1 : 0]);

const SEPARATOR = ",\n";

/**
 * Every release of a catalog, in catalog order, kept as text: one JSON row
 * `[version, channel, build | null, seconds, nanoseconds, yanked 0|1]` a
 * line, the lines joined by `,\n` (as the catalog index stores them). A
 * store of 10,000 releases then costs one string of about 450 KB, not
 * 20,000 objects that live through the whole publish and make V8 grow its
 * young generation; each entry is parsed when it is iterated, and dropped.
 */
export class CatalogEntries implements Iterable<CatalogEntry> {
  private constructor(readonly text: string, readonly length: number) {}

  static of(entries: Iterable<CatalogEntry>): CatalogEntries {
    const lines: string[] = [];
    for (const e of entries) lines.push(rowText(e));
    return new CatalogEntries(lines.join(SEPARATOR), lines.length);
  }

  /** The entries of rows as {@link text} holds them; undefined if any line is not a valid row. */
  static fromText(text: string): CatalogEntries | undefined {
    if (text === "") return new CatalogEntries(text, 0);
    // One parse of all rows (a tenth of the time of a parse per line for 10,000), and as many
    // separators as rows less one: iteration splits at the separators, so no row may hold one.
    let rows: unknown;
    try {
      rows = JSON.parse(`[${text}]`);
    } catch {
      return undefined;
    }
    if (!Array.isArray(rows) || !rows.every(isRow) || separatorsIn(text) !== rows.length - 1) return undefined;
    return new CatalogEntries(text, rows.length);
  }

  *[Symbol.iterator](): Iterator<CatalogEntry> {
    // Every row was checked once, when the text was made or read. One parse of them all per pass
    // (half the time of a parse per line), dropped when the pass ends.
    const rows = this.text === "" ? [] : (JSON.parse(`[${this.text}]`) as Row[]);
    for (const row of rows) yield entryOfRow(row);
  }

  first(): CatalogEntry | undefined {
    for (const line of lines(this.text)) return entryOfRow(JSON.parse(line) as Row);
    return undefined;
  }

  /** Whether a release of this version is listed (a search of the text: each line starts with its version). */
  has(version: string): boolean {
    const start = `[${JSON.stringify(version)},`;
    return this.text.startsWith(start) || this.text.includes(`${SEPARATOR}${start}`);
  }

  /** These entries with `entry` in front. */
  withFirst(entry: CatalogEntry): CatalogEntries {
    return new CatalogEntries(this.length === 0 ? rowText(entry) : `${rowText(entry)}${SEPARATOR}${this.text}`, this.length + 1);
  }
}

function separatorsIn(text: string): number {
  let count = 0;
  for (let at = text.indexOf(SEPARATOR); at !== -1; at = text.indexOf(SEPARATOR, at + SEPARATOR.length)) count++;
  return count;
}

function* lines(text: string): Generator<string> {
  if (text === "") return;
  for (let at = 0; ; ) {
    const end = text.indexOf(SEPARATOR, at);
    if (end === -1) {
      yield text.slice(at);
      return;
    }
    yield text.slice(at, end);
    at = end + SEPARATOR.length;
  }
}

/**
 * A catalog as a publish sees it (from the catalog index, or the catalog
 * parsed in full): every entry (catalog order) and the full records of only
 * those a publish writes from: the newest {@link PAGE_RELEASES} + 1 (index.html and the last archive pages),
 * the appcast's selection (the highest builds of each channel), the expected
 * latest release and every yanked or paused one. Memory and time stay flat in the history.
 */
export interface CatalogView {
  etag: string;
  pluginId: string;
  count: number;
  entries: CatalogEntries;
  /** Full records, in catalog order (a subset of the catalog, see above). */
  records: ReleaseRecord[];
  /** Byte offset of the first entry in the file the view was read from (a newest release is inserted there). */
  firstOffset?: number | undefined;
}
