/**
 * The CPU architectures of a Mach-O file, thin or universal (fat), read
 * from its header alone, as Sparkle's generate_appcast reads them to decide
 * `sparkle:hardwareRequirements`. No external program (`lipo`, `file`) is
 * needed, so this works on Linux CI too.
 *
 * Thin: magic 0xfeedface (32-bit) or 0xfeedfacf (64-bit) in the file's byte
 * order, cputype the next 32-bit word. Universal: magic 0xcafebabe (fat_arch
 * entries of 20 bytes) or 0xcafebabf (fat_arch_64, 32 bytes), big-endian, an
 * entry count, then the entries, cputype first. Java class files share
 * 0xcafebabe; their next word is a version far above any real slice count,
 * so a count over MAX_SLICES means "not Mach-O".
 */
const CPU_ARCH_ABI64 = 0x01000000;
const CPU_NAMES = new Map<number, string>([
  [7, "i386"],
  [7 | CPU_ARCH_ABI64, "x86_64"],
  [12, "arm"],
  [12 | CPU_ARCH_ABI64, "arm64"],
  [12 | 0x02000000, "arm64_32"],
  [18, "ppc"],
  [18 | CPU_ARCH_ABI64, "ppc64"],
]);
const MAX_SLICES = 32;
/** Bytes to read from the start of a file: enough for the largest header this reader accepts. */
export const MACH_O_HEADER_BYTES = 8 + MAX_SLICES * 32;

/** The architectures named in `header` (the first bytes of a file), or undefined when it is not a Mach-O file. */
export function machOArchitectures(header: Buffer): string[] | undefined {
  if (header.length < 8) return undefined;
  const big = header.readUInt32BE(0);
  const little = header.readUInt32LE(0);
  if (little === 0xfeedface || little === 0xfeedfacf) return [cpuName(header.readInt32LE(4))];
  if (big === 0xfeedface || big === 0xfeedfacf) return [cpuName(header.readInt32BE(4))];
  if (big !== 0xcafebabe && big !== 0xcafebabf) return undefined;
  const count = header.readUInt32BE(4);
  const entryBytes = big === 0xcafebabe ? 20 : 32;
  if (count === 0 || count > MAX_SLICES || header.length < 8 + count * entryBytes) return undefined;
  const names: string[] = [];
  for (let i = 0; i < count; i++) names.push(cpuName(header.readInt32BE(8 + i * entryBytes)));
  return names;
}

function cpuName(cputype: number): string {
  return CPU_NAMES.get(cputype >>> 0) ?? `cpu-${(cputype >>> 0).toString(16)}`;
}

/** Architectures whose presence means an Intel (or older) Mac can run the code (generate_appcast's list). */
const NOT_ARM_ONLY = new Set(["x86_64", "i386", "ppc", "ppc64"]);

/**
 * `sparkle:hardwareRequirements` for an executable with these slices:
 * `arm64` when it has slices and none of them runs on an Intel Mac, unless
 * the bundle needs macOS 27 or later (which runs only on Apple silicon, so
 * generate_appcast leaves the element out).
 */
export function hardwareRequirementsOf(architectures: readonly string[] | undefined, minimumSystemVersion: string | undefined): string | undefined {
  if (!architectures || architectures.length === 0) return undefined;
  if (architectures.some((a) => NOT_ARM_ONLY.has(a))) return undefined;
  if (!architectures.some((a) => a === "arm64")) return undefined;
  const major = minimumSystemVersion === undefined ? 0 : Number(minimumSystemVersion.split(".")[0]);
  return major >= 27 ? undefined : "arm64";
}
