/**
 * The container's compression on the reading side, as one shape whatever
 * does the work: bytes go in `input`, decompressed bytes come out of `output`,
 * and `problem` tells, once the decoder is done, what it could not read (a
 * damaged stream never surfaces as a stream error: `output` just ends, and the
 * reader reports the problem with the delta's name).
 *
 * No program is needed: zlib is Node's raw DEFLATE, lzma is read by `xz` when it
 * is on the PATH (half the CPU time, measured in docs/sparkle.md) and otherwise by xz-embedded compiled
 * to WebAssembly (the xz-decompress package: no native code, nothing compiled
 * at install), bzip2 by `bzip2`.
 */
import { spawn } from "node:child_process";
import { PassThrough, Readable, type Writable } from "node:stream";
import { createInflateRaw } from "node:zlib";
import { commandOnPath } from "../../core/command-on-path.js";
import { RelcastError } from "../../core/errors.js";
import type { CompressionName } from "./delta-format.js";

export interface DeltaDecoder {
  input: Writable;
  output: Readable;
  problem: Promise<string | undefined>;
  stop(): void;
}

/**
 * Both lzma readers apply the same rules (measured against each other in
 * test/sparkle/delta/decoder-rules.test.ts): one or more xz streams with
 * their 4-byte null padding and nothing else after them, and a dictionary
 * of at most 64 MiB (Sparkle writes 8 MiB; xz's memory limit below and the
 * WebAssembly decoder's own limit both stop a larger one). zlib refuses
 * bytes after the end of its DEFLATE stream too.
 */
const XZ_MEMLIMIT = "96MiB";

/** xz-embedded's return codes (xz_ret), as the WebAssembly decoder reports them bare. */
const XZ_CODES: Record<string, string> = {
  "2": "XZ_UNSUPPORTED_CHECK: the stream uses an integrity check this decoder does not know",
  "3": "XZ_MEM_ERROR: out of memory",
  "4": "XZ_MEMLIMIT_ERROR: its dictionary is larger than the 64 MiB limit",
  "5": "XZ_FORMAT_ERROR: it is not an xz stream",
  "6": "XZ_OPTIONS_ERROR: it uses xz options this decoder does not support",
  "7": "XZ_DATA_ERROR: the compressed data is corrupt",
  "8": "XZ_BUF_ERROR: the stream ends early or has data after its end",
};

function xzMessage(err: Error): string {
  const code = /error code (\d+)/.exec(err.message)?.[1];
  if (code && XZ_CODES[code]) return XZ_CODES[code];
  // The package dereferences a missing buffer when no byte at all came in.
  if (err instanceof TypeError) return "the xz stream is empty";
  return err.message;
}

/** Wraps an in-process transform: its error ends `output` and becomes `problem`; `finalCheck` can refuse a stream that ended well. */
function inProcess(input: Writable, decoded: Readable, what: string, describe: (err: Error) => string = (e) => e.message, finalCheck: () => Promise<string | undefined> = async () => undefined): DeltaDecoder {
  const output = new PassThrough();
  let settle: (p: string | undefined) => void = () => undefined;
  const problem = new Promise<string | undefined>((resolve) => (settle = resolve));
  decoded.on("error", (err: Error) => {
    settle(`${what} could not decompress it: ${describe(err)}`);
    output.end();
  });
  decoded.on("end", () => {
    finalCheck().then(
      (why) => settle(why === undefined ? undefined : `${what} could not decompress it: ${why}`),
      (err: Error) => settle(`${what} could not decompress it: ${err.message}`),
    );
  });
  decoded.pipe(output);
  input.on("error", () => undefined);
  return {
    input,
    output,
    problem,
    stop: () => {
      settle(undefined);
      input.destroy();
      decoded.destroy();
      output.destroy();
    },
  };
}

async function wasmXz(): Promise<DeltaDecoder> {
  // Loaded only here (its WebAssembly is 100 kB of base64); a CommonJS package, so through its default export.
  const { XzReadableStream } = (await import("xz-decompress")).default;
  const input = new PassThrough();
  // Web streams on both sides: the package is written for browsers too.
  const decoded = Readable.fromWeb(new XzReadableStream(Readable.toWeb(input) as never) as never);
  return inProcess(input, decoded, "the xz decoder", xzMessage);
}

async function external(name: "lzma" | "bzip2"): Promise<DeltaDecoder> {
  // xz's memory limit keeps a crafted dictionary size from taking the machine's memory (Sparkle writes preset 6: 8 MiB),
  // set so that xz and the WebAssembly decoder accept the same dictionaries (up to 64 MiB). Without --single-stream,
  // xz refuses data after the stream(s) but their padding, as the WebAssembly decoder does.
  const t = name === "lzma" ? { cmd: "xz", args: ["-dc", `--memlimit-decompress=${XZ_MEMLIMIT}`] } : { cmd: "bzip2", args: ["-dc"] };
  const child = spawn(t.cmd, t.args, { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr = (stderr + s).slice(0, 2000)));
  const problem = new Promise<string | undefined>((resolve) => {
    child.once("close", (code, signal) => resolve(code === 0 || signal === "SIGKILL" ? undefined : `${t.cmd} could not decompress it (exit ${code ?? signal}): ${stderr.trim() || "no message"}`));
  });
  await new Promise<void>((resolve, reject) => {
    child.once("error", (err) =>
      reject(new RelcastError("E_INPUT", `Cannot run ${t.cmd} to read a ${name} delta: ${err.message}.`, `Install ${t.cmd} (Debian: apt-get install ${t.cmd === "xz" ? "xz-utils" : "bzip2"}; macOS: brew install ${t.cmd}).`)),
    );
    child.once("spawn", () => resolve());
  });
  child.stdin.on("error", () => undefined);
  return {
    input: child.stdin,
    output: child.stdout,
    problem,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}

export async function openDecoder(name: Exclude<CompressionName, "none">): Promise<DeltaDecoder> {
  if (name === "zlib") {
    // Node's inflate stops at the end of the DEFLATE stream and drops what follows: count what came in to refuse it.
    const input = new PassThrough();
    const inflate = createInflateRaw();
    let received = 0;
    input.on("data", (chunk: Buffer) => (received += chunk.length));
    const allIn = new Promise<void>((resolve) => {
      input.once("end", resolve);
      input.once("close", resolve);
    });
    input.pipe(inflate);
    return inProcess(input, inflate, "zlib", undefined, async () => {
      await allIn;
      return received > inflate.bytesWritten ? `${received - inflate.bytesWritten} byte(s) follow the end of the DEFLATE stream` : undefined;
    });
  }
  if (name === "lzma" && !commandOnPath("xz")) return wasmXz();
  return external(name);
}
