// Start-up helpers shared by the throwaway servers the tests and the
// benchmark run on 127.0.0.1 (PostgreSQL in postgres-server.mjs, moto_server
// in bench.mjs): a free loopback port, and waiting until a freshly spawned
// server answers (or has exited).
import { createServer } from "node:net";

/** A port that was free a moment ago (another program may still take it first). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Calls `probe()` every 100 ms until it resolves. Throws `exited(code)` (or
 * a plain error) as soon as the child exits, and an error naming `name`
 * and the last probe failure after `timeoutMs`.
 */
export async function waitUntilAnswering({ child, name, probe, timeoutMs, exited }) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw exited ? exited(child.exitCode) : new Error(`${name} exited early with code ${child.exitCode}`);
    try {
      return await probe();
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${name} did not answer within ${timeoutMs} ms${last ? `: ${last.message}` : ""}`);
}
