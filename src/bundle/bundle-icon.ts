import { lstat, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { RelcastError } from "../core/errors.js";
import { resolveInsideBundle } from "../core/inside-tree.js";
import { describeTypes, largestPng, readIcns, type IcnsPng } from "./icns.js";

/** Xcode's AppIcon.icns with every size is about 1-2 MB; anything far above is not an icon. */
export const ICNS_MAX_BYTES = 32 * 1024 * 1024;

export interface BundleIconReading {
  /** The largest PNG image of the bundle's icon file; undefined: no icon to show. */
  icon?: IcnsPng & { file: string };
  /** Why a named icon gives the page none (a warning, the publish goes on). */
  note?: string;
}

const HINT = "export the icon again (Xcode's asset catalog, or `iconutil -c icns AppIcon.iconset`), or remove CFBundleIconFile";

/**
 * The icon `CFBundleIconFile` names, as macOS finds it:
 * `Contents/Resources/<name>`, with `.icns` added when the name has no
 * extension. A name that is not a file name, a file that is missing or not
 * an .icns container is refused (Finder would show a generic icon: the
 * bundle is broken); an .icns with no PNG image (only legacy or JPEG 2000
 * images) publishes without an icon, with a note. Read with no external
 * program.
 */
export async function readBundleIcon(bundleDir: string, iconFile: string | undefined): Promise<BundleIconReading> {
  if (iconFile === undefined || iconFile === "") return {};
  if (iconFile.includes("/") || iconFile === "." || iconFile === ".." || iconFile.includes("\0")) {
    throw new RelcastError("E_PLIST", `CFBundleIconFile "${iconFile}" in Info.plist is not a file name`, "set CFBundleIconFile to the name of the .icns file in Contents/Resources, e.g. AppIcon");
  }
  const name = path.extname(iconFile) === "" ? `${iconFile}.icns` : iconFile;
  const rel = path.posix.join("Contents", "Resources", name);
  // Missing is missing, whatever the extension: Finder shows a generic icon either way.
  if (!(await lstat(path.join(bundleDir, rel)).catch(() => undefined))) {
    throw new RelcastError("E_PLIST", `Info.plist names CFBundleIconFile "${iconFile}", but the bundle has no ${rel}; Finder would show a generic icon`, `add ${name} to the bundle's resources, or ${HINT}`);
  }
  if (path.extname(name).toLowerCase() !== ".icns") return { note: `CFBundleIconFile "${iconFile}" is not an .icns file: the downloads page shows no icon` };
  // A link is followed only as far as the bundle reaches (as the zip step checks every link).
  const where = await resolveInsideBundle(bundleDir, rel);
  if (!where.inside) {
    throw new RelcastError("E_PLIST", `Info.plist names CFBundleIconFile "${iconFile}", but ${rel} ${where.why}; Finder would show a generic icon`, `add ${name} to the bundle's resources, or ${HINT}`);
  }
  const file = path.join(bundleDir, where.resolved);
  const st = await stat(file);
  if (!st.isFile()) throw new RelcastError("E_PLIST", `Info.plist names CFBundleIconFile "${iconFile}", but ${rel} is not a file`, HINT);
  if (st.size > ICNS_MAX_BYTES) throw new RelcastError("E_INPUT", `the icon ${rel} is ${st.size} bytes, more than the ${ICNS_MAX_BYTES} an icon file can sensibly hold`, HINT);
  const reading = await readIcns(await readFile(file));
  if ("problem" in reading) throw new RelcastError("E_INPUT", `the icon ${rel} is not a valid .icns file: ${reading.problem}`, HINT);
  const best = largestPng(reading.images);
  const broken = reading.broken.map((b) => `the PNG in its ${JSON.stringify(b.type)} element does not decode: ${b.problem}`);
  if (!best && broken.length > 0) throw new RelcastError("E_INPUT", `the icon ${rel} is not a valid .icns file: ${broken.join("; ")}`, HINT);
  if (!best) return { note: `the icon ${rel} holds no PNG image (its elements: ${describeTypes(reading)}): the downloads page shows no icon; ${HINT}` };
  const note = broken.length > 0 ? `the icon ${rel}: ${broken.slice(0, 3).join("; ")}${broken.length > 3 ? ` (and ${broken.length - 3} more)` : ""}; skipped: the page shows its ${JSON.stringify(best.type)} image (${best.width}×${best.height}); ${HINT}` : undefined;
  return { icon: { ...best, file: rel }, ...(note && { note }) };
}
