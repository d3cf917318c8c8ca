import { readFile } from "node:fs/promises";
import path from "node:path";
import * as plist from "plist";
import * as bplist from "bplist-parser";
import { RelcastError } from "../core/errors.js";

/** The Info.plist keys relcast reads; everything else is ignored. */
export interface BundleInfo {
  shortVersion?: string;
  bundleVersion?: string;
  publicEdKey?: string;
  minimumSystemVersion?: string;
  bundleIdentifier?: string;
}

function pickString(dict: Record<string, unknown>, key: string): string | undefined {
  const v = dict[key];
  if (typeof v === "string") return v.trim();
  if (typeof v === "number") return String(v);
  return undefined;
}

/** Parses XML or binary (`bplist00`) property lists, as macOS writes both. */
export function parseInfoPlist(bytes: Buffer, source: string): BundleInfo {
  let dict: unknown;
  try {
    if (bytes.subarray(0, 8).toString("latin1") === "bplist00") {
      dict = bplist.parseBuffer(bytes)[0];
    } else {
      dict = plist.parse(bytes.toString("utf8"));
    }
  } catch (err) {
    throw new RelcastError("E_PLIST", `${source} is not a valid property list: ${(err as Error).message}`, "fix the Info.plist (check it with `plutil -lint`)");
  }
  if (typeof dict !== "object" || dict === null || Array.isArray(dict)) {
    throw new RelcastError("E_PLIST", `${source} does not hold a dictionary at the top level`, "an Info.plist must be a <dict> of bundle keys");
  }
  const d = dict as Record<string, unknown>;
  const info: BundleInfo = {};
  const shortVersion = pickString(d, "CFBundleShortVersionString");
  const bundleVersion = pickString(d, "CFBundleVersion");
  const publicEdKey = pickString(d, "SUPublicEDKey");
  const minimumSystemVersion = pickString(d, "LSMinimumSystemVersion");
  const bundleIdentifier = pickString(d, "CFBundleIdentifier");
  if (shortVersion) info.shortVersion = shortVersion;
  if (bundleVersion) info.bundleVersion = bundleVersion;
  if (publicEdKey) info.publicEdKey = publicEdKey;
  if (minimumSystemVersion) info.minimumSystemVersion = minimumSystemVersion;
  if (bundleIdentifier) info.bundleIdentifier = bundleIdentifier;
  return info;
}

export async function readBundleInfo(bundleDir: string): Promise<BundleInfo> {
  const file = path.join(bundleDir, "Contents", "Info.plist");
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    throw new RelcastError(
      "E_INPUT",
      `${bundleDir} is not a bundle: ${path.join("Contents", "Info.plist")} is missing (${(err as NodeJS.ErrnoException).code})`,
      "pass --app the built plugin bundle folder (the one holding Contents/Info.plist)",
    );
  }
  return parseInfoPlist(bytes, file);
}
