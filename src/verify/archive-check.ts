import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";
import type { FeedRecord } from "../domain/appcast-selection.js";
import { parseInfoPlist, type BundleInfo } from "../bundle/info-plist.js";
import { verifyEd25519 } from "../sparkle/ed25519-stream.js";
import { readZipListing } from "../sparkle/zip-listing.js";
import { zipRuleProblems } from "../sparkle/zip-rules.js";
import type { ObjectStore } from "../store/object-store.js";
import { signatureProblem } from "./appcast-reader.js";
import { downloadObject, type HashTally } from "./download-object.js";
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

/**
 * Downloads the update zip of one release into `workDir` and checks it the
 * way an installed copy would: byte count and SHA-256 against the record,
 * the Ed25519 signature against the public key (or the archive's own
 * SUPublicEDKey when none is given), the zip rules, and the versions in the
 * archive's Contents/Info.plist (XML or binary) against the feed item.
 */
export async function checkArchive(store: ObjectStore, key: string, record: FeedRecord, publicKey: Buffer | undefined, workDir: string, tally?: HashTally): Promise<ArchiveFindings> {
  const au = record.autoupdate;
  // The temp name is relcast's own: nothing read from the store (a version, a key) becomes a path.
  const file = path.join(workDir, `archive-${randomUUID()}.zip`);
  try {
    const got = await downloadObject(store, key, file, tally);
    if (!got) return { zip: outcome([`update zip ${key} is missing`]), signature: NOT_RUN, rules: NOT_RUN, plist: NOT_RUN };
    const zipProblems: string[] = [];
    if (got.sizeBytes !== au.sizeBytes) zipProblems.push(`update zip ${key} is ${got.sizeBytes} bytes; the record and enclosure length say ${au.sizeBytes}`);
    if (au.sha256 !== undefined && got.sha256 !== au.sha256) zipProblems.push(`update zip ${key} has SHA-256 ${got.sha256.slice(0, 12)}…, the record says ${au.sha256.slice(0, 12)}…`);

    let listing;
    try {
      listing = await readZipListing(file, (name) => /^[^/]+\/Contents\/Info\.plist$/.test(name));
    } catch (err) {
      zipProblems.push(`update zip ${key} cannot be read as a zip (${(err as Error).message})`);
    }
    const rules = listing ? outcome(zipRuleProblems(listing.entries)) : NOT_RUN;
    let bundle: BundleInfo | undefined;
    const plist: string[] = [];
    const plistBytes = listing ? [...listing.files.values()][0] : undefined;
    if (listing && !plistBytes) plist.push("the zip holds no <bundle>/Contents/Info.plist");
    if (plistBytes) {
      try {
        bundle = parseInfoPlist(plistBytes, `Contents/Info.plist in ${key}`);
      } catch (err) {
        plist.push((err as Error).message);
      }
    }
    const key32 = publicKey ?? (bundle?.publicEdKey ? Buffer.from(bundle.publicEdKey, "base64") : undefined);
    const sigSyntax = signatureProblem(au.edSignature);
    let signature: CheckResult;
    if (sigSyntax) signature = outcome([sigSyntax]);
    else if (!key32) signature = outcome(["no public key to check the signature with: pass --public-key or ship SUPublicEDKey in Info.plist"]);
    else signature = outcome((await verifyEd25519(key32, Buffer.from(au.edSignature.trim(), "base64"), { file })) ? [] : [`edSignature does not verify over the stored zip with public key ${key32.toString("base64")}`]);
    if (bundle) plist.push(...plistProblems(record, bundle, publicKey));
    return { zip: outcome(zipProblems), signature, rules, plist: outcome(plist), ...(bundle ? { bundle } : {}) };
  } finally {
    await rm(file, { force: true });
  }
}
