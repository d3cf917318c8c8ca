import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createSiteServer } from "../../../src/site/serve/site-server.js";
import { openStore } from "../../../src/store/open-store.js";
import { ICON_64 } from "../../helpers/icns-bytes.js";

describe("relcast serve: cache headers as the docs table gives them", () => {
  it("an icon's public copy (named by version) is immutable; pages, feeds and latest state are revalidated", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "relcast-serve-icon-"));
    const files: Record<string, Buffer> = {
      "icons/bridge-plugin-1.0.0-icon.png": ICON_64,
      "releases/1.0.0/bridge-plugin-1.0.0-icon.png": ICON_64,
      "index.html": Buffer.from("<!doctype html>"),
      "downloads/bridge-plugin-latest.json": Buffer.from("{}"),
    };
    for (const [key, bytes] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, key)), { recursive: true });
      await writeFile(path.join(dir, key), bytes);
    }
    const store = await openStore(`file://${dir}`, process.cwd(), {});
    const server = createSiteServer(store);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const cache = async (key: string) => {
        const res = await fetch(`${base}/${key}`);
        expect(res.status, key).toBe(200);
        if (key.endsWith(".png")) expect(Buffer.from(await res.arrayBuffer()).equals(ICON_64)).toBe(true);
        else await res.arrayBuffer();
        return res.headers.get("cache-control");
      };
      expect(await cache("icons/bridge-plugin-1.0.0-icon.png")).toBe("public, max-age=31536000, immutable");
      expect(await cache("releases/1.0.0/bridge-plugin-1.0.0-icon.png")).toBe("public, max-age=31536000, immutable");
      expect(await cache("index.html")).toBe("no-cache");
      expect(await cache("downloads/bridge-plugin-latest.json")).toBe("no-cache");
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await store.close?.();
    }
  });
});
