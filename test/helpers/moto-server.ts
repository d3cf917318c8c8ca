import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ATOMIC_SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), "moto-atomic-server.py");

export interface MotoServer {
  endpoint: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/** Credentials and region moto accepts; applied to process.env for the SDK chain and the aws cli. */
export const MOTO_ENV = {
  AWS_ACCESS_KEY_ID: "test",
  AWS_SECRET_ACCESS_KEY: "test",
  AWS_REGION: "us-east-1",
  AWS_DEFAULT_REGION: "us-east-1",
} as const;

/**
 * Whether `moto_server` can run here. Under CI=true a missing binary is a
 * failure (thrown); elsewhere the reason is returned so tests skip saying why.
 */
export function motoUnavailableReason(): string | undefined {
  const probe = spawnSync("python3", ["-c", "import moto.moto_server.werkzeug_app, werkzeug.serving"], { encoding: "utf8", timeout: 30_000 });
  const reason =
    probe.error || probe.status !== 0
      ? `moto_server is not runnable (${probe.error?.message ?? `exit ${probe.status}: ${probe.stderr.trim().split("\n").pop()}`}); install it with \`pip install 'moto[server]'\``
      : undefined;
  if (reason && process.env.CI === "true") throw new Error(`CI=true and ${reason}`);
  return reason;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function waitUntilAnswering(endpoint: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`moto_server exited early with code ${child.exitCode}`);
    try {
      const res = await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`moto_server did not answer on ${endpoint} within ${timeoutMs} ms`);
}

/** Starts moto_server on a free loopback port; stop() kills exactly that pid. */
export async function startMotoServer(): Promise<MotoServer> {
  Object.assign(process.env, MOTO_ENV);
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  let stderr = "";
  // moto's own server, with its conditional writes made atomic as S3's are (see the script).
  // The pyenv shim execs the interpreter, so the pid spawned is the server's own.
  const child = spawn("python3", [ATOMIC_SERVER, "127.0.0.1", String(port)], { stdio: ["ignore", "ignore", "pipe"] });
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error("could not spawn moto_server");
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    process.kill(pid, "SIGTERM");
    const timer = setTimeout(() => child.exitCode === null && process.kill(pid, "SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await waitUntilAnswering(endpoint, child, 30_000);
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n${stderr}`);
  }
  return { endpoint, port, pid, stop };
}
