import { createHash } from "node:crypto";
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyTarget } from "../../src/apply/apply-write.js";
import { loadConfig } from "../../src/config/load-config.js";
import { RelcastError } from "../../src/core/errors.js";
import { APPCAST_KEY, CATALOG_KEY, downloadKey, versionedKey } from "../../src/domain/release-layout.js";
import { openStore } from "../../src/store/open-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";
import { contentTypeFor } from "../../src/store/content-types.js";
import { planSiteSync, syncSite } from "../../src/site/site-sync.js";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

/**
 * `site sync --repair` on a folder store hashes the release's own object,
 * then copies it: a source replaced in between (same size, other bytes) must
 * not be copied. The copy is pinned to the version hashed, so it is refused,
 * the site is planned again, the new source fails the hash and the damaged
 * copy is left alone (exit 11, nothing written to it); once the source holds
 * the record's bytes again, the same repair copies it.
 */
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const immutable = { cacheControl: "public, max-age=31536000, immutable" };

describe("a repair's copy on a folder store copies the version it hashed, or nothing", () => {
  let ws: Workspace;
  let store: ObjectStore;

  beforeAll(async () => {
    ws = await makeWorkspace();
    const p = await ws.plugin("1.0.0", 100);
    const res = await runCli(ws.publishArgs(p, "1.0.0"));
    expect(res.code, res.stderr).toBe(0);
  });
  afterAll(async () => {
    await store?.close?.();
    await rm(ws.dir, { recursive: true, force: true });
  });

  it("refuses the replaced source, then repairs from the restored one", async () => {
    const config = await loadConfig(ws.configFile);
    store = await openStore(config.store, config.baseDir, { s3: config.s3 });
    const name = `${config.pluginId}-1.0.0.dmg`;
    const src = versionedKey("1.0.0", name);
    const dst = downloadKey(name);
    const good = (await store.get(src))!.body;
    const flip = (b: Buffer, at: number) => Buffer.concat([b.subarray(0, at), Buffer.from([b[at]! ^ 0xff]), b.subarray(at + 1)]);
    const damaged = flip(good, 100);
    await store.put(dst, damaged, { contentType: contentTypeFor(dst), ...immutable });

    const plan = (await planSiteSync(store, store, config, { allDownloads: true, repair: true }))!;
    expect(plan.writes.filter((w) => w.needed && w.op === "copy").map((w) => w.key)).toContain(dst);
    // Someone replaces the release's own object after the plan hashed it: same size, other bytes.
    const planted = flip(good, 200);
    await store.put(src, planted, { contentType: contentTypeFor(src), ...immutable });
    const [catalog, appcast] = await Promise.all([store.head(CATALOG_KEY), store.head(APPCAST_KEY)]);
    const outcome = await syncSite(applyTarget(store, () => {}), config, { allDownloads: true, repair: true }, { writes: plan.writes, catalogEtag: catalog!.etag, appcastEtag: appcast?.etag }).catch((err: unknown) => err);
    expect(outcome).toBeInstanceOf(RelcastError);
    expect((outcome as RelcastError).exitCode).toBe(11);
    expect((outcome as Error).message).toMatch(new RegExp(`${dst.replace(/\./g, "\\.")} was not rewritten`));
    expect(sha256((await store.get(dst))!.body)).toBe(sha256(damaged));

    await store.put(src, good, { contentType: contentTypeFor(src), ...immutable });
    await syncSite(applyTarget(store, () => {}), config, { allDownloads: true, repair: true });
    expect(sha256((await store.get(dst))!.body)).toBe(sha256(good));
  });
});
