import semver from "semver";
import { RelcastError } from "../core/errors.js";
import { catalogSchema, type Catalog, type ReleaseRecord } from "./record-schema.js";
import { fromTimestamp } from "./timestamps.js";
import { yankFields } from "./yank-state.js";

/** Newest first by publication time; equal times fall back to the higher semver first. */
export function compareNewestFirst(a: Pick<ReleaseRecord, "publishedAt" | "version">, b: Pick<ReleaseRecord, "publishedAt" | "version">): number {
  const ta = fromTimestamp(a.publishedAt).getTime() * 1e6 + (a.publishedAt._nanoseconds % 1e6);
  const tb = fromTimestamp(b.publishedAt).getTime() * 1e6 + (b.publishedAt._nanoseconds % 1e6);
  if (ta !== tb) return tb - ta;
  const va = semver.valid(a.version);
  const vb = semver.valid(b.version);
  if (va && vb) return semver.rcompare(va, vb);
  return a.version < b.version ? 1 : a.version > b.version ? -1 : 0;
}

export function buildCatalog(pluginId: string, records: readonly ReleaseRecord[]): Catalog {
  const versions = [...records].sort(compareNewestFirst);
  return { pluginId, count: versions.length, versions };
}


/**
 * Adds or replaces (same version) one record. A yank belongs to the catalog
 * entry, not to the immutable record, so re-publishing a yanked version
 * keeps it yanked; so does a paused rollout stay paused.
 */
export function mergeIntoCatalog(current: Catalog | undefined, pluginId: string, record: ReleaseRecord): Catalog {
  const previous = current?.versions.find((r) => r.version === record.version);
  const others = (current?.versions ?? []).filter((r) => r.version !== record.version);
  const yanked = previous?.yanked && !record.yanked ? { ...record, ...yankFields(previous) } : record;
  const merged = previous?.rollout && !record.rollout ? { ...yanked, rollout: previous.rollout } : yanked;
  return buildCatalog(pluginId, [...others, merged]);
}

export function serializeCatalog(catalog: Catalog): string {
  return JSON.stringify(catalog, null, 2) + "\n";
}

/** What serializeCatalog writes before the first entry of a catalog of `count` (> 0) releases. */
export function catalogHead(pluginId: string, count: number): string {
  return `{\n  "pluginId": ${JSON.stringify(pluginId)},\n  "count": ${count},\n  "versions": [\n    `;
}

/** A record as serializeCatalog writes it inside `versions` (4 spaces in). */
export function entryText(record: ReleaseRecord): string {
  return JSON.stringify(record, null, 2).replace(/\n/g, "\n    ");
}

/**
 * Where the first entry of `catalog` starts in `bytes`, the file it was
 * parsed from, when the file begins as serializeCatalog lays it out (so a
 * newer entry can be written in front of it without re-serializing the
 * rest); undefined for any other layout and for an empty catalog.
 */
export function firstEntryOffset(bytes: Buffer, catalog: Catalog): number | undefined {
  if (catalog.versions.length === 0) return undefined;
  const head = Buffer.from(catalogHead(catalog.pluginId, catalog.count));
  return bytes.length > head.length && bytes.subarray(0, head.length).equals(head) && bytes[head.length] === 0x7b ? head.length : undefined;
}

/**
 * Parses the catalog read from a store and checks every entry against
 * §2.6; a hand-edited broken file is a clear error, never overwritten.
 * Answers the values as read, not zod's copy (which puts the schema's keys
 * first): a catalog written again keeps each entry's key order, so its
 * bytes change only where a record changed.
 */
export function parseCatalog(text: string, source: string): Catalog {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new RelcastError(
      "E_CATALOG",
      `the catalog ${source} is not valid JSON (${(err as Error).message})`,
      "restore it from the records with `relcast rebuild` (each release keeps releases/<version>/release.json)",
    );
  }
  const parsed = catalogSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RelcastError(
      "E_CATALOG",
      `the catalog ${source} does not match the catalog envelope: ${issue?.path.join(".") || "(root)"} ${issue?.message ?? ""}`.trim(),
      "restore it from the records with `relcast rebuild`",
    );
  }
  return raw as Catalog;
}
