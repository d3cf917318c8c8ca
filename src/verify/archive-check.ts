import { Readable } from "node:stream";
import type { FeedRecord } from "../domain/appcast-selection.js";
import { parseInfoPlist, type BundleInfo } from "../bundle/info-plist.js";
import { readZipListing, type RangeSource, type ZipListing } from "../sparkle/zip-listing.js";
import { storeRanges, ZIP_INFO_PLIST } from "../catalog/stored-bundle.js";
import { zipRuleProblems } from "../sparkle/zip-rules.js";
import type { ObjectStore } from "../store/object-store.js";
import { signatureProblem } from "./appcast-reader.js";
import type { Ed25519Check } from "../core/hash-pool.js";
import { downloadObject, IN_MEMORY_BYTES, signatureHolds, type Downloaded, type HashTally } from "./download-object.js";
import { NOT_RUN, outcome, type CheckResult } from "./release-row.js";

export interface ArchiveFindings {
  zip: CheckResult;
  signature: CheckResult;
  rules: CheckResult;
  plist: CheckResult;
  bundle?: BundleInfo;
}

function plistProblems(record: FeedRecord, info: BundleInfo, publicKey: Buffer | undefined): string[] {
  const au = record.autoupdate;
  const found: string[] = [];
  if (info.bundleVersion !== String(au.buildNumber)) found.push(`Info.plist CFBundleVersion is "${info.bundleVersion ?? ""}" but sparkle:version is "${au.buildNumber}"`);
  if (info.shortVersion !== undefined && info.shortVersion !== record.version) found.push(`Info.plist CFBundleShortVersionString is "${info.shortVersion}" but the release is ${record.version}`);
  if ((info.minimumSystemVersion ?? undefined) !== (au.minimumSystemVersion ?? undefined)) {
    found.push(`Info.plist LSMinimumSystemVersion is "${info.minimumSystemVersion ?? ""}" but sparkle:minimumSystemVersion is "${au.minimumSystemVersion ?? ""}"`);
  }
  if (publicKey && info.publicEdKey !== undefined && info.publicEdKey !== publicKey.toString("base64")) {
    found.push(`Info.plist SUPublicEDKey ${info.publicEdKey} is not the public key being verified against`);
  }
  return found;
}

/** A zip in memory, read through the same range interface. */
function bufferRanges(body: Buffer): RangeSource {
  return { size: body.length, openRange: async (start, end) => Readable.from([body.subarray(start, end)]) };
}


/** The listing and Info.plist of a zip, read by ranges or from its bytes; a problem when it cannot be read as a zip. */
async function readListing(source: RangeSource, key: string): Promise<{ listing?: ZipListing; problem?: string; bundle?: BundleInfo; plist: string[] }> {
  let listing: ZipListing;
  try {
    listing = await readZipListing(source, (name) => ZIP_INFO_PLIST.test(name));
  } catch (err) {
    return { problem: `update zip ${key} cannot be read as a zip (${(err as Error).message})`, plist: [] };
  }
  const plistBytes = [...listing.files.values()][0];
  if (!plistBytes) return { listing, plist: ["the zip holds no <bundle>/Contents/Info.plist"] };
  try {
    return { listing, bundle: parseInfoPlist(plistBytes, `Contents/Info.plist in ${key}`), plist: [] };
  } catch (err) {
    return { listing, plist: [(err as Error).message] };
  }
}

/**
 * Checks the update zip of one release the way an installed copy would meet
 * it: byte count and SHA-256 against the record, the Ed25519 signature
 * against the public key (or the archive's own SUPublicEDKey when none is
 * given), the zip rules, and the versions in the archive's
 * Contents/Info.plist (XML or binary) against the feed item. The zip is read
 * whole once and nothing is written to disk.
 *
 * A store that reads in place (the folder store) first gives the central
 * directory and Info.plist by a few positioned reads, so the key is known
 * before the one pass in which a hash worker hashes the zip and checks its
 * signature over it (OpenSSL, the zip held in that worker up to 16 MiB, else
 * by its challenge hash): the bytes never come to this thread, whose garbage
 * collector hundreds of 2 MiB bodies kept busy. Elsewhere (S3, where a range
 * is a request) a zip of up to 16 MiB is downloaded into memory, and its
 * listing and signature are read from there; a larger one is hashed with the
 * signature's challenge hash in the same pass and its listing read by ranges.
 */
export async function checkArchive(store: ObjectStore, key: string, record: FeedRecord, publicKey: Buffer | undefined, tally?: HashTally): Promise<ArchiveFindings> {
  const au = record.autoupdate;
  const sigSyntax = signatureProblem(au.edSignature);
  const signatureBytes = sigSyntax ? undefined : Buffer.from(au.edSignature.trim(), "base64");
  const checkWith = (key32: Buffer | undefined): Ed25519Check | undefined => (key32 && signatureBytes ? { publicKey: key32, signature: signatureBytes } : undefined);
  const keyOf = (bundle: BundleInfo | undefined) => publicKey ?? (bundle?.publicEdKey ? Buffer.from(bundle.publicEdKey, "base64") : undefined);
  const download = (ed25519: Ed25519Check | undefined, counted: boolean, keepUpTo?: number) =>
    downloadObject(store, key, { ...(keepUpTo !== undefined ? { keepUpTo } : {}), ...(tally && counted ? { tally } : {}), ...(ed25519 ? { ed25519 } : {}) });
  const missing = { zip: outcome([`update zip ${key} is missing`]), signature: NOT_RUN, rules: NOT_RUN, plist: NOT_RUN };
  const zipProblems: string[] = [];
  let changed: string | undefined;
  let got: Downloaded | undefined;
  let read: Awaited<ReturnType<typeof readListing>>;
  if (store.openRead) {
    const head = await store.head(key);
    if (!head) return missing;
    read = await readListing(storeRanges(store, key, head.size, head.etag), key);
    got = await download(checkWith(keyOf(read.bundle)), true);
    if (!got) return missing;
    if (got.etag !== head.etag) changed = `update zip ${key} changed while it was read; run verify again`;
  } else {
    got = await download(checkWith(publicKey), true, IN_MEMORY_BYTES);
    if (!got) return missing;
    read = await readListing(got.body ? bufferRanges(got.body) : storeRanges(store, key, got.sizeBytes, got.etag), key);
  }
  if (got.sizeBytes !== au.sizeBytes) zipProblems.push(`update zip ${key} is ${got.sizeBytes} bytes; the record and enclosure length say ${au.sizeBytes}`);
  if (au.sha256 !== undefined && got.sha256 !== au.sha256) zipProblems.push(`update zip ${key} has SHA-256 ${got.sha256.slice(0, 12)}…, the record says ${au.sha256.slice(0, 12)}…`);
  if (read.problem) zipProblems.push(read.problem);
  if (changed) zipProblems.push(changed);
  const { listing, bundle } = read;
  const rules = listing ? outcome(zipRuleProblems(listing.entries)) : NOT_RUN;
  const plist = [...read.plist];
  const key32 = keyOf(bundle);
  let signature: CheckResult;
  if (sigSyntax) signature = outcome([sigSyntax]);
  else if (!key32) signature = outcome(["no public key to check the signature with: pass --public-key or ship SUPublicEDKey in Info.plist"]);
  else {
    const check = checkWith(key32)!;
    // Checked in the read above; a large zip downloaded before its own key was known (S3, no --public-key) takes one more pass.
    let valid = await signatureHolds(got, check);
    if (valid === undefined) {
      const again = await download(check, false);
      valid = again !== undefined && (await signatureHolds(again, check)) === true;
    }
    signature = outcome(valid ? [] : [`edSignature does not verify over the stored zip with public key ${key32.toString("base64")}`]);
  }
  if (bundle) plist.push(...plistProblems(record, bundle, publicKey));
  return { zip: outcome(zipProblems), signature, rules, plist: outcome(plist), ...(bundle ? { bundle } : {}) };
}
