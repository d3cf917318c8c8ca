import { spawn, spawnSync, type ChildProcess } from "node:child_process";
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

/** Resolves with the port the server prints ("port <n>") once it is bound. */
function boundPort(child: ChildProcess, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`moto_server printed no port within ${timeoutMs} ms`)), timeoutMs);
    child.stdout!.on("data", (d: Buffer) => {
      out = (out + d.toString()).slice(-4000);
      const m = /^port (\d+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`moto_server exited early with code ${code}`));
    });
  });
}

/**
 * Starts moto_server on a loopback port the system picks (the server binds
 * port 0 and prints the port: no window in which another run can take it);
 * stop() kills exactly that pid.
 */
export async function startMotoServer(): Promise<MotoServer> {
  Object.assign(process.env, MOTO_ENV);
  let stderr = "";
  // moto's own server, with its conditional writes made atomic as S3's are (see the script).
  // The pyenv shim execs the interpreter, so the pid spawned is the server's own.
  const child = spawn("python3", [ATOMIC_SERVER, "127.0.0.1", "0"], { stdio: ["ignore", "pipe", "pipe"] });
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
    const port = await boundPort(child, 30_000);
    const endpoint = `http://127.0.0.1:${port}`;
    await waitUntilAnswering(endpoint, child, 30_000);
    return { endpoint, port, pid, stop };
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n${stderr}`);
  }
}
