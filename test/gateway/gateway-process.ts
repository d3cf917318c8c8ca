import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

/**
 * The real `relcast gateway` (dist/cli/relcast.mjs) as a child process:
 * started on port 0, its address read from stderr; every stderr line is
 * kept, and a test can wait for one to appear (an event, not a sleep).
 */
const cli = path.resolve(import.meta.dirname, "../../dist/cli/relcast.mjs");

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  port: number;
  stderr(): string;
  /** Resolves when a stderr line matches `pattern`; rejects if the process exits first. */
  logged(pattern: RegExp): Promise<void>;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** Sends `signal` and waits for the exit; kills with SIGKILL if asked (cleanup). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function startGatewayProcess(args: string[]): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [cli, "gateway", ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => {
    err += chunk;
    for (const w of [...waiters]) {
      if (w.pattern.test(err)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  const logged = (pattern: RegExp) =>
    pattern.test(err)
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          waiters.push({ pattern, resolve });
          void exited.then(() => (pattern.test(err) ? resolve() : reject(new Error(`gateway exited without logging ${pattern}: ${err}`))));
        });
  return new Promise((resolve, reject) => {
    logged(/listening on http:\/\/127\.0\.0\.1:\d+/).then(() => {
      const url = /listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(err)!;
      resolve({
        child,
        url: url[1]!,
        port: Number(url[2]),
        stderr: () => err,
        logged,
        exited,
        stop: async (signal = "SIGTERM") => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      });
    }, reject);
  });
}
