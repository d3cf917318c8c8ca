// A throwaway PostgreSQL server on 127.0.0.1, for the gateway tests
// (test/helpers/postgres-server.ts) and the gateway benchmark: initdb on a
// temp data folder, `postgres` on a free loopback port (no Unix socket,
// trust auth on loopback, fsync off). As root it runs as the `postgres`
// user (the server refuses root). stop() ends exactly that pid and removes
// the folder.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chmod, chown, mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { freePort, waitUntilAnswering } from "./loopback-server.mjs";

const SUPERUSER = "relcast";

/** The folder holding initdb and postgres: Debian's /usr/lib/postgresql/<newest>/bin, else PATH. */
export function postgresBinDir() {
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) if (existsSync(path.join(root, v, "bin", "postgres"))) return path.join(root, v, "bin");
  }
  const which = spawnSync("sh", ["-c", "command -v postgres"], { encoding: "utf8" });
  const found = which.status === 0 ? which.stdout.trim() : "";
  return found && existsSync(path.join(path.dirname(found), "initdb")) ? path.dirname(found) : undefined;
}

/** uid/gid to run the server as when we are root. */
function serverUser() {
  if (process.getuid?.() !== 0) return undefined;
  const uid = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
  const gid = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
  if (uid.status === 0 && gid.status === 0) return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  return { uid: 65534, gid: 65534 }; // nobody
}

function run(file, args, user) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ["ignore", "ignore", "pipe"], ...user, env: { ...process.env, LC_ALL: "C" } });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr = (stderr + d.toString()).slice(-4000)));
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(file)} exited ${code}: ${stderr}`))));
  });
}

class PortTaken extends Error {}

/**
 * Waits until our server accepts connections. The free port was found by
 * binding and closing it, so another program (another test run's postgres)
 * can take it first: then ours exits and, since the one answering could be
 * the other server, the answer counts only if it serves our data folder.
 */
function waitUntilAccepting(port, child, data, timeoutMs) {
  return waitUntilAnswering({
    child,
    name: `postgres on 127.0.0.1:${port}`,
    timeoutMs,
    exited: (code) => new PortTaken(`postgres exited early with code ${code}`),
    probe: async () => {
      const client = new pg.Client({ host: "127.0.0.1", port, user: SUPERUSER, database: "postgres", connectionTimeoutMillis: 1000 });
      try {
        await client.connect();
        const { rows } = await client.query("SELECT current_setting('data_directory') AS dir");
        if (rows[0]?.dir !== data) throw new Error(`port ${port} answered for another server (${rows[0]?.dir})`);
      } finally {
        await client.end().catch(() => undefined);
      }
    },
  });
}

/**
 * The server runs as another user than root, so every folder above its data
 * folder must let that user pass. A test's own temp folder (mkdtemp, mode
 * 0700) does not: give root-owned folders on the way the search bit only
 * (never read), so nothing in them becomes listable.
 */
async function letUserTraverse(from) {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const st = await stat(dir);
    if (st.uid === 0 && (st.mode & 0o001) === 0) await chmod(dir, (st.mode & 0o7777) | 0o001);
    if (path.dirname(dir) === dir) return;
  }
}

export async function startPostgresServer() {
  const bin = postgresBinDir();
  if (!bin) throw new Error("PostgreSQL is not installed (initdb/postgres not found); install it with `apt-get install -y postgresql`");
  const user = serverUser();
  const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-pg-"));
  const data = path.join(dir, "data");
  if (user) {
    await chown(dir, user.uid, user.gid);
    await letUserTraverse(path.dirname(dir));
  }
  let child;
  let stderr = "";
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      process.kill(child.pid, "SIGINT"); // fast shutdown: disconnect clients, stop
      const timer = setTimeout(() => child.exitCode === null && process.kill(child.pid, "SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await run(path.join(bin, "initdb"), ["-D", data, "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"], user);
    const settings = ["listen_addresses=127.0.0.1", "unix_socket_directories=", "fsync=off", "synchronous_commit=off", "full_page_writes=off", "max_connections=60"];
    let port;
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      child = spawn(path.join(bin, "postgres"), ["-D", data, "-p", String(port), ...settings.flatMap((s) => ["-c", s])], {
        stdio: ["ignore", "ignore", "pipe"],
        ...user,
        env: { ...process.env, LC_ALL: "C" },
      });
      child.stderr.on("data", (d) => (stderr = (stderr + d.toString()).slice(-4000)));
      if (child.pid === undefined) throw new Error("could not spawn postgres");
      try {
        await waitUntilAccepting(port, child, data, 30_000);
        break;
      } catch (err) {
        // Lost the port to another program between finding and binding it: try another one.
        if (!(err instanceof PortTaken) || attempt === 5) throw err;
      }
    }
    return {
      port,
      pid: child.pid,
      async createDatabase(name) {
        if (!/^[a-z][a-z0-9_]{0,40}$/.test(name)) throw new Error(`bad database name ${name}`);
        const admin = new pg.Client({ host: "127.0.0.1", port, user: SUPERUSER, database: "postgres" });
        await admin.connect();
        try {
          await admin.query(`CREATE DATABASE ${name}`);
        } finally {
          await admin.end();
        }
        return `postgres://${SUPERUSER}@127.0.0.1:${port}/${name}`;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw new Error(`${err.message}\n${stderr}`);
  }
}
