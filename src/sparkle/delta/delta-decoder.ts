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

/** Wraps an in-process transform: its error ends `output` and becomes `problem`. */
function inProcess(input: Writable, decoded: Readable, what: string): DeltaDecoder {
  const output = new PassThrough();
  let settle: (p: string | undefined) => void = () => undefined;
  const problem = new Promise<string | undefined>((resolve) => (settle = resolve));
  decoded.on("error", (err: Error) => {
    settle(`${what} could not decompress it: ${err.message}`);
    output.end();
  });
  decoded.on("end", () => settle(undefined));
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
  return inProcess(input, decoded, "the xz decoder");
}

async function external(name: "lzma" | "bzip2"): Promise<DeltaDecoder> {
  // xz's memory limit keeps a crafted dictionary size from taking the machine's memory (Sparkle writes preset 6: 9 MiB).
  const t = name === "lzma" ? { cmd: "xz", args: ["-dc", "--single-stream", "--memlimit-decompress=256MiB"] } : { cmd: "bzip2", args: ["-dc"] };
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
    const inflate = createInflateRaw();
    return inProcess(inflate, inflate, "zlib");
  }
  if (name === "lzma" && !commandOnPath("xz")) return wasmXz();
  return external(name);
}
