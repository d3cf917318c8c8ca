/**
 * The container's compression, done by the system's xz and bzip2 (Node has no
 * LZMA or bzip2 codec; see docs/sparkle.md for why not an npm addon). Apple's
 * COMPRESSION_LZMA, which Sparkle uses for the default "lzma" mode, reads and
 * writes an .xz stream at preset 6; we write one xz stream, one block
 * (single-threaded), preset 6, CRC64 check. bzip2 mode is one bzip2 stream at
 * block size 9, as BZ2_bzWriteOpen(…, 9, …) writes it.
 */
import { spawn } from "node:child_process";
import { createReadStream, createWriteStream } from "node:fs";
import { once } from "node:events";
import { RelcastError } from "../../core/errors.js";
import type { CompressionName } from "./delta-format.js";

function tool(name: CompressionName): { cmd: string; compress: string[]; decompress: string[] } {
  if (name === "lzma") return { cmd: "xz", compress: ["--format=xz", "--check=crc64", "-6", "--threads=1", "-c"], decompress: ["-dc", "--single-stream"] };
  return { cmd: "bzip2", compress: ["-9", "-c"], decompress: ["-dc"] };
}

/**
 * Streams `input` (from byte `inputStart`) through the codec into `output`
 * (appending when `append`). "none" copies.
 */
export async function runCodec(mode: "compress" | "decompress", name: CompressionName, input: string, inputStart: number, output: string, append: boolean): Promise<void> {
  const sink = createWriteStream(output, { flags: append ? "a" : "w" });
  const sinkClosed = once(sink, "close");
  const source = createReadStream(input, { start: inputStart });
  if (name === "none") {
    source.pipe(sink);
    await sinkClosed;
    return;
  }
  const t = tool(name);
  const child = spawn(t.cmd, mode === "compress" ? t.compress : t.decompress, { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
  const spawned = new Promise<void>((resolve, reject) => {
    child.once("error", (err) =>
      reject(new RelcastError("E_INPUT", `Cannot run ${t.cmd} for ${name} delta compression: ${err.message}.`, `Install ${t.cmd} (Debian: apt-get install ${t.cmd === "xz" ? "xz-utils" : "bzip2"}; macOS: brew install ${t.cmd}) or set deltas.compression.`)),
    );
    child.once("spawn", () => resolve());
  });
  try {
    await spawned;
  } catch (err) {
    sink.destroy();
    source.destroy();
    throw err;
  }
  source.on("error", (err) => child.stdin.destroy(err));
  child.stdin.on("error", () => undefined);
  source.pipe(child.stdin);
  child.stdout.pipe(sink);
  const [code] = (await once(child, "close")) as [number | null];
  await sinkClosed;
  if (code !== 0) {
    throw new RelcastError(
      mode === "decompress" ? "E_VERIFY" : "E_INTERNAL",
      `${t.cmd} could not ${mode} the delta (exit ${code}): ${stderr.trim() || "no message"}.`,
      mode === "decompress" ? "The delta file is damaged or not a Sparkle delta." : undefined,
    );
  }
}
