import type { Readable } from "node:stream";

/** What a store knows about one object. `etag` is opaque: only compare it for equality. */
export interface ObjectMeta {
  key: string;
  size: number;
  etag: string;
  lastModified: Date;
  contentType?: string;
  cacheControl?: string;
  /**
   * Headers relcast never writes that change what a client gets (S3 only):
   * Content-Encoding (a client decompresses the bytes), Content-Disposition
   * (another file name, or a download shown inline) and
   * x-amz-website-redirect-location (website hosting answers a redirect
   * instead of the object), by their HTTP names.
   */
  foreignHeaders?: Readonly<Record<string, string>>;
}

/**
 * A local file is copied into the store, unless `handOver` says the caller
 * will neither change nor reuse it (a file in its own work folder): a folder
 * store may then keep that very file as the object (a hard link, no copy).
 */
export type PutBody = Buffer | string | { file: string; handOver?: boolean };

export interface PutOptions {
  contentType: string;
  cacheControl?: string;
  /** `*`: create only; fails with PreconditionFailedError when the key exists. */
  ifNoneMatch?: "*";
  /** Replace only if the current ETag equals this one. */
  ifMatch?: string;
}

/** What a copy's caller knows of the version it copies. */
export interface CopySourceMeta {
  size: number;
  etag: string;
}

export interface ByteRange {
  start: number;
  /** Inclusive end. */
  end: number;
}

/** Where objects live, in the `<store_scheme>://<bucket>` form records name. */
export interface StoreLocation {
  scheme: "file" | "s3";
  bucket: string;
  /** Key prefix inside the bucket, without leading or trailing slash ("" for none). */
  prefix: string;
}

/** An object opened for reading by position (see {@link ObjectStore.openRead}); `meta` describes these very bytes. */
export interface OpenedObject {
  meta: ObjectMeta;
  /** The open descriptor: positioned reads (pread) from any thread of this process, until `close`. */
  fd: number;
  /**
   * Equal for two opened objects only when they are one and the same file,
   * unchanged in between (the folder store: device, inode, size, and the
   * modification and change times; a hard-link copy shares them). Never
   * made into a key or a path.
   */
  sameFile?: string;
  close(): Promise<void>;
}

/**
 * The few verbs the pipeline needs. Keys are relative to the store root
 * (`releases/1.2.0/x.dmg`). Conditional writes throw PreconditionFailedError.
 */
export interface ObjectStore {
  readonly location: StoreLocation;
  /** `<scheme>://<bucket>[/<prefix>]/<key>`, the object-store URI a record names. */
  uriFor(key: string): string;
  head(key: string): Promise<ObjectMeta | undefined>;
  get(key: string): Promise<{ body: Buffer; meta: ObjectMeta } | undefined>;
  getStream(key: string, range?: ByteRange): Promise<{ stream: Readable; meta: ObjectMeta } | undefined>;
  /**
   * Optional, where reading in place is cheap (the folder store): the object
   * opened once for positioned reads into the caller's buffers (on any
   * thread), so a reader of many objects (verify) reuses its memory instead
   * of a new buffer per chunk. Same rules as getStream (never through a
   * link); undefined when missing. The caller must close it.
   */
  openRead?(key: string): Promise<OpenedObject | undefined>;
  put(key: string, body: PutBody, options: PutOptions): Promise<{ etag: string }>;
  /**
   * Optional, where a store can send an object's bytes before making it (S3:
   * the parts of a multipart upload): starts sending `file` for `key` now, so
   * that a later `put` of the same file with the same content type and cache
   * control only has to complete it. Nothing becomes visible before that put
   * (which applies its precondition as usual); an upload never completed is
   * aborted by `abortInFlight`/`close`. The file must not change until then.
   */
  stage?(key: string, file: string, options: Pick<PutOptions, "contentType" | "cacheControl">): void;
  /**
   * Server-side copy where the store supports it. Overwrites unless options say otherwise.
   * `source`: the source's size and ETag when the caller knows them (it has just written or read it),
   * so the store need not read them again. The S3 store copies that version only (its copy requests
   * name the ETag): a source replaced or removed before the copy is done fails it with
   * SourceChangedError, and nothing is written. The folder store does the same: the source's
   * descriptor must show the pinned ETag (and size) before and after its bytes are linked or copied.
   */
  copy(fromKey: string, toKey: string, options: PutOptions, source?: CopySourceMeta): Promise<{ etag: string }>;
  list(prefix: string): AsyncIterable<ObjectMeta>;
  /**
   * The files `list` leaves out under `prefix` as the folder store's own:
   * every file with a `.relcast-*` name or in a `.relcast-*` folder (its
   * temp and lock files, and anything else so named); their metadata, never
   * made into paths. A static
   * host serving the folder serves them like any file, so `relcast verify`
   * reports those on the public site. Stores without such files leave it out.
   */
  hiddenFiles?(prefix: string): Promise<ObjectMeta[]>;
  delete(key: string): Promise<void>;
  /** Throws a RelcastError E_STORE naming the fix when the store cannot be used. */
  checkReachable(): Promise<void>;
  /**
   * Why a write to `key` would be refused before any byte is written (the
   * folder store: a link or a file on the way, a folder at the key), for a
   * dry run to fail as the real run would; undefined: nothing in the way.
   */
  writeBlocked?(key: string): Promise<string | undefined>;
  /**
   * Stores whose conditional writes are the server's word (S3): resolves once
   * the store has shown it refuses a losing `If-None-Match: *` and `If-Match`
   * (checked once per opened store; every write waits for it), else throws
   * E_STORE. Stores that enforce their own preconditions (the folder store,
   * under its lock) leave it out.
   */
  proveConditionalWrites?(): Promise<void>;
  /**
   * Removes what interrupted runs leave behind and nobody can see (temp files,
   * stale locks, incomplete multipart uploads) older than the given time.
   * Returns a description of each item removed.
   */
  sweepIncomplete(olderThan: Date): Promise<string[]>;
  /**
   * Entries a reader of this store skips because they are not plain objects
   * (the folder store's symbolic links and special files), one sentence each;
   * `relcast verify` reports them as problems. Stores without such entries
   * leave it out. With `folders` (keys ending in "/", "" for the root) only
   * those folders and the way to them are checked, not the whole store.
   */
  strayEntries?(folders?: readonly string[]): Promise<string[]>;
  /**
   * Entries whose names are not UTF-8 (the folder store: a file system keeps
   * any bytes), as their paths from the root with each byte that is not
   * printable ASCII shown as `\xNN`. No key can name them, so `list` skips
   * them; `relcast verify` reports each as a warning. Never made into a key.
   */
  undecodableNames?(): Promise<string[]>;
  /**
   * Called when the process is interrupted (Ctrl-C, SIGTERM): removes this
   * process's temp files and aborts its multipart uploads now, instead of
   * leaving them for `relcast gc`. Returns a description of each.
   */
  abortInFlight?(): Promise<string[]>;
  close?(): Promise<void>;
}
