import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { motoUnavailableReason } from "../helpers/moto-server.js";
import { s3Workspace, useMotoServer } from "../helpers/s3-workspace.js";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

const AT = "2026-03-01T12:00:00.000Z";

interface DryRun {
  record: { version: string };
  plan: { writes: Array<{ step: string; op: string; key: string; needed: boolean; source?: { kind: string } }> };
  contents: Record<string, string>;
}

/**
 * The plan is the contract: the bytes a dry run shows (catalog, appcast,
 * record, pages) are the bytes the publish then writes, when the
 * publication time is fixed.
 */
async function dryRunThenPublish(ws: Workspace, store: ObjectStore): Promise<void> {
  const first = await ws.plugin("1.0.0", 100);
  const seeded = await runCli(ws.publishArgs(first, "1.0.0", ["--published-at", "2026-02-01T12:00:00.000Z", "--quiet"]));
  expect(seeded.code, seeded.stderr).toBe(0);

  const p = await ws.plugin("1.1.0", 110);
  const dry = await runCli(ws.publishArgs(p, "1.1.0", ["--dry-run", "--json", "--published-at", AT]));
  expect(dry.code, dry.stderr).toBe(0);
  const planned = JSON.parse(dry.stdout) as DryRun;
  expect(planned.record.version).toBe("1.1.0");
  // The unified diff of the appcast against the store's current one shows the new item.
  expect(dry.stderr).toContain("--- a/releases/appcast.xml");
  expect(dry.stderr).toContain("+++ b/releases/appcast.xml");
  expect(dry.stderr).toMatch(/^\+\s*<sparkle:shortVersionString>1\.1\.0<\/sparkle:shortVersionString>$/m);
  expect(dry.stderr).toMatch(/^\+\s*"version": "1\.1\.0",$/m);
  expect(await store.head("releases/1.1.0/release.json")).toBeUndefined();

  const exact = planned.plan.writes.filter((w) => w.op === "put" && w.needed && w.source?.kind !== "stamped" && w.key in planned.contents);
  expect(exact.map((w) => w.key)).toEqual(expect.arrayContaining([
    "releases/1.1.0/release.json", "releases/catalog.json", "releases/appcast.xml", "index.html", "api/v1/plugins/bridge-plugin/appcast.xml",
  ]));

  const real = await runCli(ws.publishArgs(p, "1.1.0", ["--published-at", AT, "--quiet"]));
  expect(real.code, real.stderr).toBe(0);
  for (const w of exact) {
    const stored = await store.get(w.key);
    expect(stored?.body.toString("utf8"), w.key).toBe(planned.contents[w.key]);
  }
  // The stamped catalog index holds the planned bytes with the ETag the catalog write returned, then signed (its signature's value is filled in).
  const index = planned.contents["releases/catalog-index.json"]!;
  const etag = (await store.head("releases/catalog.json"))!.etag;
  const stored = (await store.get("releases/catalog-index.json"))!.body.toString("utf8");
  expect(stored).toMatch(/,"signature":"[A-Za-z0-9+/]{86}==","entries":\[\n/);
  expect(stored.replace(/"signature":"[^"]*"/, '"signature":""')).toBe(index.replace(JSON.stringify("(the ETag this write returns)"), JSON.stringify(etag)));
}

// The folder store and the S3 store (with its moto server) are independent: the two run at the same time.
describe.concurrent("publish --dry-run shows exactly what publish writes", () => {
  it("folder store", async () => {
    const ws = await makeWorkspace();
    await dryRunThenPublish(ws, await openStore(`file://${ws.storeDir}`, ws.dir));
  });

  const reason = motoUnavailableReason();
  describe.skipIf(Boolean(reason))(`S3 store (moto)${reason ? ` — skipped: ${reason}` : ""}`, () => {
    const moto = useMotoServer();

    it("S3 store", async () => {
      const { ws, store } = await s3Workspace(moto.server, "dry");
      try {
        await dryRunThenPublish(ws, store);
      } finally {
        await store.close?.();
      }
    });
  });
});
