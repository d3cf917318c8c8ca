/**
 * A first publish into a store with no catalog but records of other
 * releases: their disk images and zips are checked against one listing of
 * releases/ (no request per object), and records whose builds rank against
 * their versions are refused with the same sentence and fix as `rebuild`
 * (one function, domain/build-order.ts).
 */
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load-config.js";
import { isRelcastError, type RelcastError } from "../../../src/core/errors.js";
import { rebuildFeeds } from "../../../src/release/rebuild.js";
import { recordsWithoutCatalog } from "../../../src/steps/preflight/orphan-records.js";
import { openStore } from "../../../src/store/open-store.js";
import type { ObjectStore } from "../../../src/store/object-store.js";
import { publishVersions } from "../../helpers/published-store.js";
import { makeWorkspace, type Workspace } from "../../helpers/workspace.js";

let ws: Workspace;
let heads = 0;
let store: ObjectStore;

/** The folder store, counting its HEAD requests (what each object check cost before). */
async function countingStore(): Promise<ObjectStore> {
  const inner = await openStore(`file://${ws.storeDir}`, ws.dir);
  return Object.assign(Object.create(inner) as ObjectStore, { head: (key: string) => ((heads += 1), inner.head(key)) });
}

async function refusal(run: () => Promise<unknown>): Promise<RelcastError> {
  const err = await run().then(() => undefined, (e: unknown) => e);
  if (!isRelcastError(err)) throw new Error(`expected a RelcastError, got ${String(err)}`);
  return err;
}

beforeAll(async () => {
  ws = await makeWorkspace();
  await publishVersions(ws, [["1.0.0", 100], ["1.1.0", 110]]);
  await rm(path.join(ws.storeDir, "releases", "catalog.json"));
  await rm(path.join(ws.storeDir, "releases", "catalog-index.json"), { force: true });
  store = await countingStore();
});
afterAll(async () => {
  await rm(ws.dir, { recursive: true, force: true });
});

describe("records without a catalog", () => {
  it("are taken as the catalog's releases after one listing, without a HEAD per disk image or zip", async () => {
    heads = 0;
    const warned: string[] = [];
    const view = await recordsWithoutCatalog(store, "bridge-plugin", "1.2.0", "the store", undefined, (m) => warned.push(m));
    expect(view?.records.map((r) => r.version).sort()).toEqual(["1.0.0", "1.1.0"]);
    expect(warned.join("\n")).toContain("holds the records of 2 release(s)");
    expect(heads).toBe(0);
  });

  it("a record whose zip the listing does not hold is refused (E_STORE), naming the object, still without a HEAD", async () => {
    const zip = path.join(ws.storeDir, "releases", "1.0.0", "bridge-plugin-1.0.0.zip");
    await rename(zip, `${zip}.away`);
    try {
      heads = 0;
      const err = await refusal(() => recordsWithoutCatalog(store, "bridge-plugin", "1.2.0", "the store", undefined, () => {}));
      expect(err.code).toBe("E_STORE");
      expect(err.message).toContain("releases/1.0.0/bridge-plugin-1.0.0.zip");
      expect(err.message).not.toContain("1.1.0");
      expect(heads).toBe(0);
    } finally {
      await rename(`${zip}.away`, zip);
    }
  });

  it("a record without an update archive (no autoupdate) names no zip: its missing zip is not asked for", async () => {
    const file = path.join(ws.storeDir, "releases", "1.0.0", "release.json");
    const zip = path.join(ws.storeDir, "releases", "1.0.0", "bridge-plugin-1.0.0.zip");
    const good = await readFile(file, "utf8");
    const record = JSON.parse(good) as Record<string, unknown>;
    delete record.autoupdate;
    await writeFile(file, JSON.stringify(record, null, 2));
    await rename(zip, `${zip}.away`);
    try {
      const view = await recordsWithoutCatalog(store, "bridge-plugin", "1.2.0", "the store", undefined, () => {});
      expect(view?.records.map((r) => [r.version, r.autoupdate === undefined])).toContainEqual(["1.0.0", true]);
      await rename(path.join(ws.storeDir, "releases", "1.0.0", "bridge-plugin-1.0.0.dmg"), path.join(ws.storeDir, "dmg.away"));
      try {
        const err = await refusal(() => recordsWithoutCatalog(store, "bridge-plugin", "1.2.0", "the store", undefined, () => {}));
        expect(err.message).toContain("releases/1.0.0/bridge-plugin-1.0.0.dmg");
        expect(err.message).not.toContain("bridge-plugin-1.0.0.zip");
      } finally {
        await rename(path.join(ws.storeDir, "dmg.away"), path.join(ws.storeDir, "releases", "1.0.0", "bridge-plugin-1.0.0.dmg"));
      }
    } finally {
      await rename(`${zip}.away`, zip);
      await writeFile(file, good);
    }
  });

  it("records whose builds rank against their versions: publish and rebuild refuse with one sentence and one fix", async () => {
    const file = path.join(ws.storeDir, "releases", "1.1.0", "release.json");
    const good = await readFile(file, "utf8");
    await writeFile(file, good.replace(/"buildNumber": 110/, '"buildNumber": 90'));
    try {
      const config = await loadConfig(ws.configFile);
      const preflight = await refusal(() => recordsWithoutCatalog(store, "bridge-plugin", "1.2.0", "the store", undefined, () => {}));
      const rebuild = await refusal(() => rebuildFeeds(store, config, { allowSkipped: false, dryRun: true }));
      for (const err of [preflight, rebuild]) {
        expect(err.code).toBe("E_VERSION");
        expect(err.message).toContain("1.0.0 (build 100) has a higher build than 1.1.0 (build 90)");
      }
      const sentence = (e: RelcastError) => e.message.slice(e.message.indexOf(": the build numbers"));
      expect(sentence(preflight)).toBe(sentence(rebuild));
      expect(preflight.hint).toBe(rebuild.hint);
    } finally {
      await writeFile(file, good);
    }
  });
});
