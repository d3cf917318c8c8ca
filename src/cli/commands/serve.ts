import type { Command } from "commander";
import { RelcastError } from "../../core/errors.js";
import { createSiteServer } from "../../site/serve/site-server.js";
import { withConfiguredStore } from "../configured-store.js";

interface ServeFlags {
  config?: string;
  store?: string;
  port: string;
  host: string;
}

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("serve the store's public site ({app_url} paths) over HTTP, for local testing")
    .option("--config <file>", "config file", "relcast.config.json")
    .option("--store <url>", "store URL (overrides config)")
    .option("--port <n>", "port (0 picks a free one)", "8080")
    .option("--host <address>", "address to listen on", "127.0.0.1")
    .action(async (flags: ServeFlags) => {
      const port = Number(flags.port);
      if (!/^\d+$/.test(flags.port) || port > 65535) throw new RelcastError("E_USAGE", `--port ${flags.port} is not a TCP port`, "pass a number from 0 to 65535");
      await withConfiguredStore(flags, {}, {}, async (config, store) => {
        await store.checkReachable();
        const server = createSiteServer(store, (line) => process.stderr.write(line + "\n"));
        await new Promise<void>((resolve, reject) => {
          server.once("error", (err: NodeJS.ErrnoException) => reject(new RelcastError("E_NETWORK", `cannot listen on ${flags.host}:${port} (${err.code})`, "pick another --port or --host")));
          server.listen(port, flags.host, () => resolve());
        });
        const address = server.address();
        const actual = typeof address === "object" && address ? address.port : port;
        const host = flags.host.includes(":") ? `[${flags.host}]` : flags.host;
        const { scheme, bucket, prefix } = store.location;
        process.stdout.write(`serving ${scheme}://${bucket}${prefix ? `/${prefix}` : ""} as ${config.appUrl} at http://${host}:${actual}/\n`);
        await new Promise<void>((resolve) => {
          const stop = () => server.close(() => resolve());
          process.once("SIGINT", stop);
          process.once("SIGTERM", stop);
        });
      });
    });
}
