/** Mach-O files made byte by byte for tests (no Apple toolchain here). */
/** cputype values of <mach/machine.h>. */
export const CPU = { i386: 7, x86_64: 0x01000007, arm64: 0x0100000c, ppc: 18 };

/** A thin 64-bit Mach-O header (little-endian, as Apple's compilers write it) with an empty load-command list. */
export function thinMachO(cpu: number): Buffer {
  const b = Buffer.alloc(32);
  b.writeUInt32LE(0xfeedfacf, 0);
  b.writeInt32LE(cpu, 4);
  b.writeInt32LE(cpu === CPU.arm64 ? 0 : 3, 8); // cpusubtype: ALL
  b.writeUInt32LE(2, 12); // MH_EXECUTE
  return b;
}

/** A universal (fat) file: big-endian fat_arch entries, each slice a thin header at a 4 KiB boundary. */
export function fatMachO(cpus: number[]): Buffer {
  const head = Buffer.alloc(8 + cpus.length * 20);
  head.writeUInt32BE(0xcafebabe, 0);
  head.writeUInt32BE(cpus.length, 4);
  const slices: Buffer[] = [];
  cpus.forEach((cpu, i) => {
    const offset = 4096 * (i + 1);
    const at = 8 + i * 20;
    head.writeInt32BE(cpu, at);
    head.writeInt32BE(0, at + 4);
    head.writeUInt32BE(offset, at + 8);
    head.writeUInt32BE(32, at + 12);
    head.writeUInt32BE(12, at + 16);
    slices.push(thinMachO(cpu));
  });
  const out = Buffer.alloc(4096 * (cpus.length + 1));
  head.copy(out, 0);
  slices.forEach((s, i) => s.copy(out, 4096 * (i + 1)));
  return out;
}

