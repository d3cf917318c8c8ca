import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { CatalogEntries } from "../../src/catalog/catalog-entry.js";
import { readIndexText, serializeCatalogIndex } from "../../src/catalog/catalog-index.js";
import { signCatalogIndex } from "../../src/catalog/catalog-index-signature.js";
import { parseSigningKey } from "../../src/sparkle/signing-key.js";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

/**
 * `releases/catalog-index.json` stands in for the catalog while the catalog
 * keeps its ETag, signed with the release key. An index edited behind
 * relcast's back (even by someone who can write the store and recomputes its
 * digest) must neither pass verify nor change what the next publish checks
 * or writes.
 */
describe("a catalog index that does not match the catalog", () => {
  let ws: Workspace;
  let indexFile: string;
  let original: string;
  let build105: { app: string; dmg: string; notes: string };

  beforeAll(async () => {
    ws = await makeWorkspace();
    for (const [v, b] of [["1.0.0", 100], ["1.1.0", 110]] as const) {
      const r = await runCli(ws.publishArgs(await ws.plugin(v, b), v));
      expect(r.code, r.stderr).toBe(0);
    }
    build105 = await ws.plugin("1.2.0", 105);
    indexFile = path.join(ws.storeDir, "releases", "catalog-index.json");
    original = await readFile(indexFile, "utf8");
  }, 240_000);

  const verify = () => runCli(["verify", "--config", ws.configFile]);
  const publish105 = () => runCli(ws.publishArgs(build105, "1.2.0"));

  it("an index relcast wrote verifies clean", async () => {
    const r = await verify();
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain("catalog-index.json");
  }, 120_000);

  it("rows edited with the head left alone: verify names the row, and the publish still refuses build 105 after 110 (E_VERSION)", async () => {
    const nl = original.indexOf("\n");
    const tampered = original.slice(0, nl) + original.slice(nl).replaceAll('"110"', '"50"');
    expect(tampered).not.toBe(original);
    await writeFile(indexFile, tampered);
    const v = await verify();
    expect(v.code).toBe(11);
    expect(v.stdout + v.stderr).toMatch(/catalog-index\.json is not an index relcast wrote: its digest does not match/);
    expect(v.stdout + v.stderr).toContain("relcast rebuild");
    const p = await publish105();
    expect(p.code, p.stderr).toBe(5);
    expect(p.stderr).toContain("E_VERSION");
    expect(p.stderr).toMatch(/warning: not using .*catalog-index\.json: its digest does not match/);
    await writeFile(indexFile, original);
  }, 120_000);

  it("a forged index with its digest recomputed and the old signature kept: verify says the signature fails, the publish does not trust it and refuses build 105 after 110", async () => {
    const read = readIndexText(original);
    if (!read.ok) throw new Error(read.why);
    const { view } = read;
    const rows = view.entries.text.replace('"110"', '"50"');
    const records = view.records.map((r) => (r.version === "1.1.0" ? { ...r, autoupdate: { ...r.autoupdate!, buildNumber: 50 } } : r));
    const forged = serializeCatalogIndex({ ...view, entries: CatalogEntries.fromText(rows)!, records }, read.limit, read.catalogSha256, read.seal.publicKey)
      .replace('"signature":""', `"signature":${JSON.stringify(read.seal.signature)}`);
    await writeFile(indexFile, forged);
    const v = await verify();
    expect(v.code).toBe(11);
    const out = v.stdout + v.stderr;
    expect(out).toMatch(/catalog-index\.json cannot be trusted: its signature does not verify .*delete releases\/catalog-index\.json/);
    expect(out).toContain("does not match the catalog it names");
    expect(out).toMatch(/row 1\.1\.0 says channel stable, build 50, .*; the catalog says channel stable, build 110/);
    expect(out).toMatch(/its record of 1\.1\.0 differs from the catalog's \(autoupdate\)/);
    // The publish reads the catalog instead (one warning line) and its build-order check sees build 110.
    const catalogBefore = await readFile(path.join(ws.storeDir, "releases", "catalog.json"));
    const p = await publish105();
    expect(p.code, p.stderr).toBe(5);
    expect(p.stderr).toContain("E_VERSION");
    expect(p.stderr.match(/warning: not using .*catalog-index\.json: its signature does not verify.*reading the catalog in full instead/g)).toHaveLength(1);
    expect(await readFile(path.join(ws.storeDir, "releases", "catalog.json"))).toEqual(catalogBefore);
    await writeFile(indexFile, original);
  }, 180_000);

  it("an index naming other catalog bytes stops the publish before the feeds (E_CATALOG), nothing published from it", async () => {
    const read = readIndexText(original);
    if (!read.ok) throw new Error(read.why);
    // Signed with the release key (as if relcast itself had written it for other bytes): the SHA-256 check still stops the publish.
    const key = parseSigningKey(ws.key.seedBase64, "test key");
    await writeFile(indexFile, await signCatalogIndex(serializeCatalogIndex(read.view, read.limit, "0".repeat(64), key.publicKeyBase64), key));
    const v = await verify();
    expect(v.code).toBe(11);
    expect(v.stdout + v.stderr).toMatch(/names a catalog with SHA-256 000000000000…, the catalog has [0-9a-f]{12}…/);
    const catalogBefore = await readFile(path.join(ws.storeDir, "releases", "catalog.json"));
    const later = await ws.plugin("1.3.0", 130);
    const p = await runCli(ws.publishArgs(later, "1.3.0"));
    expect(p.code, p.stderr).toBe(12);
    expect(p.stderr).toContain("the index was edited or written for other bytes");
    expect(await readFile(path.join(ws.storeDir, "releases", "catalog.json"))).toEqual(catalogBefore);
    // The fix it names: rebuild writes the index anew; verify is clean again.
    expect((await runCli(["rebuild", "--config", ws.configFile, "--key-file", ws.keyFile])).code).toBe(0);
    const after = await verify();
    expect(after.code, after.stdout + after.stderr).toBe(0);
  }, 180_000);

  it("rebuild over a damaged index writes one naming the catalog's real ETag, which the next publish trusts; an index naming no ETag is named in a warning, another ETag for the same bytes (a copied store) in nothing", async () => {
    const damaged = (await readFile(indexFile, "utf8")).replace("publisher", "publishes");
    await writeFile(indexFile, damaged);
    const v = await verify();
    expect(v.code).toBe(11);
    expect(v.stdout + v.stderr).toContain("relcast rebuild");
    expect((await runCli(["rebuild", "--config", ws.configFile, "--key-file", ws.keyFile])).code).toBe(0);
    const rebuilt = await readFile(indexFile, "utf8");
    const head = readIndexText(rebuilt);
    if (!head.ok) throw new Error(head.why);
    expect(head.catalogEtag).not.toContain("the ETag this write returns");
    expect(head.catalogEtag).toMatch(/^"[^"]+"$/);
    expect((await verify()).code).toBe(0);

    // What an older rebuild wrote (the placeholder): named, as a warning, since no publish trusts such an index.
    const key = parseSigningKey(ws.key.seedBase64, "test key");
    for (const [etag, said] of [["(the ETag this write returns)", /names the catalog's ETag as "\(the ETag this write returns\)", which is no ETag/]] as const) {
      const text = await signCatalogIndex(serializeCatalogIndex({ ...head.view, etag }, head.limit, head.catalogSha256, key.publicKeyBase64), key);
      await writeFile(indexFile, text);
      const bad = await verify();
      expect(bad.code, bad.stdout + bad.stderr).toBe(0);
      expect(bad.stdout + bad.stderr).toMatch(said);
      expect(bad.stdout + bad.stderr).toContain("so no publish trusts it");
      expect(bad.stdout + bad.stderr).toContain("relcast rebuild --key-file");
    }
    // Another real ETag for the very bytes (a folder store copied elsewhere gets new ETags): stale, nothing said.
    await writeFile(indexFile, await signCatalogIndex(serializeCatalogIndex({ ...head.view, etag: '"0-0-0"' }, head.limit, head.catalogSha256, key.publicKeyBase64), key));
    const copied = await verify();
    expect(copied.code, copied.stdout + copied.stderr).toBe(0);
    expect(copied.stdout + copied.stderr).not.toContain("catalog-index.json");
    await writeFile(indexFile, rebuilt);
    // The rebuilt index is trusted: the publish reads no catalog in full (no "not using" warning).
    const p = await runCli(ws.publishArgs(await ws.plugin("1.4.0", 140), "1.4.0"));
    expect(p.code, p.stderr).toBe(0);
    expect(p.stderr).not.toContain("not using");
    expect((await verify()).code).toBe(0);
  }, 240_000);
});
