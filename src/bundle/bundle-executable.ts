import { open, stat } from "node:fs/promises";
import path from "node:path";
import { RelcastError } from "../core/errors.js";
import { MACH_O_HEADER_BYTES, machOArchitectures } from "./mach-o.js";

/**
 * The bundle's main executable (`Contents/MacOS/<CFBundleExecutable>`), as
 * macOS will look for it: present, a file, and executable. A bundle whose
 * Info.plist names an executable it does not hold cannot be loaded, and
 * Sparkle refuses to install it; one whose executable lost its execute bit
 * (artifacts copied between CI jobs often do) installs and then fails to
 * launch. Both are refused before anything is zipped. A bundle with no
 * CFBundleExecutable (resources only) has nothing to check.
 *
 * Returns the executable's architectures (undefined: not a Mach-O file,
 * e.g. a script, or no executable).
 */
export async function checkBundleExecutable(bundleDir: string, executable: string | undefined): Promise<string[] | undefined> {
  if (executable === undefined) return undefined;
  const rel = path.posix.join("Contents", "MacOS", executable);
  if (executable === "" || executable.includes("/") || executable === "." || executable === "..") {
    throw new RelcastError("E_PLIST", `CFBundleExecutable "${executable}" in Info.plist is not a file name`, "set CFBundleExecutable to the name of the file in Contents/MacOS (Xcode's $(EXECUTABLE_NAME))");
  }
  const file = path.join(bundleDir, rel);
  const st = await stat(file).catch(() => undefined);
  if (!st || !st.isFile()) {
    throw new RelcastError(
      "E_PLIST",
      `Info.plist names CFBundleExecutable "${executable}", but the bundle has ${st ? "a folder" : "no file"} at ${rel}; macOS could not load it and Sparkle would refuse to install it`,
      "publish the complete built bundle, or fix CFBundleExecutable to name the file in Contents/MacOS",
    );
  }
  if ((st.mode & 0o111) === 0) {
    throw new RelcastError(
      "E_INPUT",
      `the bundle's executable ${rel} has no execute permission (mode ${(st.mode & 0o777).toString(8).padStart(4, "0")}): installed copies could not launch it`,
      `run chmod +x "${file}" (artifacts copied between CI jobs often lose the bit: archive the bundle with tar or ditto before uploading it)`,
    );
  }
  const handle = await open(file, "r");
  try {
    const header = Buffer.alloc(MACH_O_HEADER_BYTES);
    const { bytesRead } = await handle.read(header, 0, header.length, 0);
    return machOArchitectures(header.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}
