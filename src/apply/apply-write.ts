import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { RelcastError, SourceChangedError } from "../core/errors.js";
import { ETAG_PLACEHOLDER, type PlannedWrite, type PutWrite } from "../domain/release-plan.js";
import type { ObjectStore, PutBody, PutOptions } from "../store/object-store.js";
import { putCreateOnly } from "./create-only.js";

/**
 * Carries out planned writes, one at a time, exactly as planned: the body,
 * headers and precondition come from the plan. `source` is where copies read
 * from; everything is written to `target` (one store, except `site build`).
 */
export interface ApplyTarget {
  source: ObjectStore;
  target: ObjectStore;
  log(line: string): void;
  /** ETags this apply's puts returned, by key (stamped sources read them). */
  etags: Map<string, string>;
  /** Keys written, in order. */
  written: string[];
  /** Sizes of the write-once objects the plan puts, by key: with the ETag a put returned, a copy of one needs no HEAD (never a key that may be rewritten). */
  sizes?: ReadonlyMap<string, number>;
}

export function applyTarget(store: ObjectStore, log: (line: string) => void, target: ObjectStore = store): ApplyTarget {
  return { source: store, target, log, etags: new Map(), written: [] };
}

async function bodyOf(t: ApplyTarget, w: PutWrite): Promise<PutBody> {
  const s = w.source;
  if (s.kind === "file") return { file: s.file, handOver: s.handOver === true };
  if (s.kind === "bytes") return s.bytes;
  const etag = t.etags.get(s.etagOf) ?? (await t.target.head(s.etagOf))?.etag;
  if (etag === undefined) throw new Error(`pipeline bug: ${w.key} is stamped with the ETag of ${s.etagOf}, which is not there`);
  const stamped = s.template.replace(JSON.stringify(ETAG_PLACEHOLDER), JSON.stringify(etag));
  return s.seal ? s.seal(stamped) : stamped;
}

async function applyPut(t: ApplyTarget, w: PutWrite): Promise<void> {
  const body = await bodyOf(t, w);
  const options: PutOptions = { contentType: w.contentType, cacheControl: w.cacheControl };
  const p = w.precondition;
  let etag: string | undefined;
  if (p.kind === "create-only") etag = await putCreateOnly(t, w, body, options);
  else if (p.kind === "if-match") etag = (await t.target.put(w.key, body, p.etag === null ? { ...options, ifNoneMatch: "*" } : { ...options, ifMatch: p.etag })).etag;
  else etag = (await t.target.put(w.key, body, options)).etag;
  // A create-only put another run had already made with the same bytes and headers wrote nothing (putCreateOnly said so).
  if (etag === undefined) return;
  t.etags.set(w.key, etag);
  t.written.push(w.key);
  t.log(`wrote ${w.key}${w.sizeBytes !== undefined ? ` (${w.sizeBytes} bytes)` : ""}`);
}

/** A copy inside one store is server-side; across stores it streams through a temp file (never held in memory). */
async function applyCopy(t: ApplyTarget, from: string, to: string, options: PutOptions, pinned?: { size: number; etag: string }): Promise<void> {
  if (t.source === t.target) {
    // The source's size and ETag: from this run's own put of it (the plan's size, the ETag the put returned),
    // else one HEAD. The store copies exactly that version (a source replaced meanwhile fails the copy).
    const etag = t.etags.get(from);
    const size = t.sizes?.get(from);
    const source = pinned ?? (etag && size !== undefined ? { size, etag } : await t.source.head(from));
    if (!source) throw missingSource(t.source, from);
    await t.target.copy(from, to, options, { size: source.size, etag: source.etag });
    return;
  }
  const got = await t.source.getStream(from);
  if (!got) throw missingSource(t.source, from);
  if (pinned && got.meta.etag !== pinned.etag) {
    got.stream.destroy();
    throw new SourceChangedError(from, to, `the source was replaced after it was checked (ETag ${pinned.etag} then, ${got.meta.etag} now)`);
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-transfer-"));
  try {
    const file = path.join(dir, "object");
    await pipeline(got.stream, createWriteStream(file));
    await t.target.put(to, { file, handOver: true }, options);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function missingSource(store: ObjectStore, key: string): RelcastError {
  return new RelcastError("E_STORE", `${store.uriFor(key)} disappeared while this run wrote from it`, "another run changed the store at the same time; run the command again");
}

export async function applyWrite(t: ApplyTarget, w: PlannedWrite): Promise<void> {
  if (!w.needed) return;
  if (w.op === "put") return applyPut(t, w);
  if (w.op === "copy") {
    await applyCopy(t, w.from, w.key, { contentType: w.contentType, cacheControl: w.cacheControl }, w.pinned);
    t.written.push(w.key);
    t.log(`copied ${w.from} to ${w.key}`);
    return;
  }
  await t.target.delete(w.key);
  t.log(`removed ${w.key} (${w.why})`);
}

/**
 * Writes that may go out together: server-side copies and create-only puts
 * (versioned objects), each to its own key. Neither reads what another
 * writes, so their order never matters; everything else (a compare-and-swap,
 * an overwrite, a delete) keeps its place in the plan.
 */
function independent(w: PlannedWrite): boolean {
  return w.needed && (w.op === "copy" || (w.op === "put" && w.precondition.kind === "create-only"));
}

/**
 * Carries out `writes` in plan order, except that each run of consecutive
 * independent writes goes out at once: the two uploads of a publish complete
 * side by side, and the download copies do not wait for one another (on S3
 * each copy is a request the server spends time on).
 */
export async function applyWrites(t: ApplyTarget, writes: readonly PlannedWrite[]): Promise<void> {
  for (let i = 0; i < writes.length; ) {
    let end = i;
    const keys = new Set<string>();
    while (end < writes.length && independent(writes[end]!) && !keys.has(writes[end]!.key)) keys.add(writes[end++]!.key);
    if (end - i > 1) {
      // Two runs of one version racing with different bytes: the first create-only put (the disk image) decides
      // alone which run wins, so the loser stops before it has made any other object of the release.
      if (writes[i]!.op === "put") await applyWrite(t, writes[i++]!);
      const settled = await Promise.allSettled(writes.slice(i, end).map((w) => applyWrite(t, w)));
      const failed = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed) throw failed.reason;
      i = end;
    } else await applyWrite(t, writes[i++]!);
  }
}
