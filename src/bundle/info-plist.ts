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
  bundleExecutable?: string;
  feedUrl?: string;
  /** SURequireSignedFeed (Sparkle 2.9): the app refuses an appcast without a valid signature block. */
  requireSignedFeed?: boolean;
  /** CFBundleDisplayName: the name Finder shows; compared with the config's displayName. */
  bundleDisplayName?: string;
  /** CFBundleIconFile: the icon in Contents/Resources (`.icns` may be left off). */
  iconFile?: string;
}

/** Sparkle reads the key with boolForInfoDictionaryKey: <true/>, or a string such as YES / true / 1. */
function pickBool(dict: Record<string, unknown>, key: string): boolean | undefined {
  const v = dict[key];
  if (v === undefined) return undefined;
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return v !== 0;
  if (typeof v === "string") return /^\s*(y|t|[1-9])/i.test(v);
  return undefined;
}

function describeValue(v: unknown): string {
  if (Array.isArray(v)) return "an <array>";
  if (v instanceof Date) return "a <date>";
  if (Buffer.isBuffer(v)) return "<data>";
  if (typeof v === "boolean") return `<${v}/>`;
  if (typeof v === "number") return Number.isInteger(v) ? `<integer>${v}</integer>` : `<real>${v}</real>`;
  return typeof v === "object" && v !== null ? "a <dict>" : String(v);
}

/** The keys relcast reads are strings in every bundle Xcode writes; Sparkle reads them as strings too. */
function pickString(dict: Record<string, unknown>, key: string, source: string): string | undefined {
  const v = dict[key];
  if (v === undefined) return undefined;
  if (typeof v === "string") {
    // macOS and Sparkle read these values as they are: "BridgePlugin " names another executable, "1.0 " another version.
    if (v !== v.trim()) throw new RelcastError("E_PLIST", `${key} in ${source} is "${v}", with white space around it; macOS and Sparkle read the value as it is`, `write it without the spaces: <key>${key}</key><string>${v.trim()}</string>`);
    return v;
  }
  throw new RelcastError("E_PLIST", `${key} in ${source} is ${describeValue(v)}, not a <string>`, `write it as a string, e.g. <key>${key}</key><string>${typeof v === "number" ? v : "…"}</string>`);
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
  const shortVersion = pickString(d, "CFBundleShortVersionString", source);
  const bundleVersion = pickString(d, "CFBundleVersion", source);
  const publicEdKey = pickString(d, "SUPublicEDKey", source);
  const minimumSystemVersion = pickString(d, "LSMinimumSystemVersion", source);
  const bundleIdentifier = pickString(d, "CFBundleIdentifier", source);
  if (shortVersion) info.shortVersion = shortVersion;
  if (bundleVersion) info.bundleVersion = bundleVersion;
  if (publicEdKey) info.publicEdKey = publicEdKey;
  if (minimumSystemVersion) info.minimumSystemVersion = minimumSystemVersion;
  if (bundleIdentifier) info.bundleIdentifier = bundleIdentifier;
  const bundleExecutable = pickString(d, "CFBundleExecutable", source);
  if (bundleExecutable !== undefined) info.bundleExecutable = bundleExecutable;
  const feedUrl = pickString(d, "SUFeedURL", source);
  if (feedUrl) info.feedUrl = feedUrl;
  // Only compared with the config's displayName (a warning), so a value of another type is passed over, not refused.
  // (CFBundleName is left out: it is often the product's code name, such as BridgePlugin.)
  const bundleDisplayName = d["CFBundleDisplayName"];
  if (typeof bundleDisplayName === "string" && bundleDisplayName.trim() !== "") info.bundleDisplayName = bundleDisplayName.trim();
  const iconFile = pickString(d, "CFBundleIconFile", source);
  if (iconFile !== undefined) info.iconFile = iconFile;
  const requireSignedFeed = pickBool(d, "SURequireSignedFeed");
  if (requireSignedFeed !== undefined) info.requireSignedFeed = requireSignedFeed;
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

/** Why an SUPublicEDKey value is not a usable Ed25519 public key (base64 of 32 bytes), or undefined when it is. */
export function publicEdKeyProblem(value: string): string | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) return "it is not base64";
  const bytes = Buffer.from(value, "base64").length;
  return bytes === 32 ? undefined : `it decodes to ${bytes} bytes, not the 32 of an Ed25519 public key`;
}
