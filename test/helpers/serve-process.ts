import { spawn } from "node:child_process";
import { connect } from "node:net";
import { CLI, REPO_ROOT } from "./run-cli.js";

export interface ServeProcess {
  base: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts the real `relcast serve --port 0` and reads the address it prints; stop() ends exactly that pid. */
export function startServe(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, "serve", "--port", "0", ...args], { cwd: REPO_ROOT, env: { ...process.env, GITHUB_ACTIONS: "", ...env } });
    let out = "";
    let err = "";
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /at (http:\/\/[^\s]+\/)/.exec(out);
      if (m) {
        resolve({
          base: m[1]!.replace(/\/$/, ""),
          pid: child.pid!,
          stop: async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
            await exited;
          },
        });
      }
    });
    child.once("exit", (code) => reject(new Error(`relcast serve exited with ${code}: ${err}`)));
  });
}

export interface RawResponse {
  status: number;
  head: string;
  body: string;
}

/** Sends a request target exactly as given (no client-side normalisation of `..` or `%2e`). */
export function rawGet(base: string, target: string, method = "GET"): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let data = "";
    socket.on("data", (d: Buffer) => (data += d.toString("latin1")));
    socket.on("error", reject);
    socket.on("end", () => {
      const [head = "", ...rest] = data.split("\r\n\r\n");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body: rest.join("\r\n\r\n") });
    });
    socket.write(`${method} ${target} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`);
  });
}
