import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";

const BASE = { pluginId: "hdr-plugin", displayName: "Hdr Plugin", publisher: "Example Tools", appUrl: "https://example.com/hdr", store: "file://./store" };

/**
 * cacheControl values go out as HTTP headers: S3 trims surrounding whitespace
 * (verify then finds the stored value unequal forever) and an upload refuses
 * a control character. The config refuses both, naming the key and the fix.
 */
describe("config: cacheControl values an HTTP header can carry", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-hdr-config-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const load = async (cacheControl: Record<string, string>) => {
    const file = path.join(dir, `c-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, JSON.stringify({ ...BASE, cacheControl }));
    return loadConfig(file);
  };

  it.each([
    [{ immutable: " public, max-age=31536000, immutable" }, /cacheControl\.immutable[\s\S]*starts or ends with whitespace[\s\S]*"public, max-age=31536000, immutable"/],
    [{ mutable: "no-cache\t" }, /cacheControl\.mutable[\s\S]*starts or ends with whitespace[\s\S]*write "no-cache"/],
    [{ mutable: "no-cache\nX-Injected: 1" }, /cacheControl\.mutable[\s\S]*U\+000A[\s\S]*remove it/],
    [{ immutable: "public,\u0000max-age=60" }, /cacheControl\.immutable[\s\S]*U\+0000/],
    [{ mutable: "no-cache, max-age=0 \u00e9" }, /cacheControl\.mutable[\s\S]*U\+00E9/],
  ])("refuses %j with E_CONFIG naming the key and the fix", async (cacheControl, message) => {
    const failed = load(cacheControl);
    await expect(failed).rejects.toMatchObject({ code: "E_CONFIG" });
    const err = (await failed.catch((e: unknown) => e)) as { message: string; hint?: string };
    expect(`${err.message}\n${err.hint ?? ""}`).toMatch(message);
  });

  it("accepts values with inner spaces, as written", async () => {
    const config = await load({ immutable: "public, max-age=600", mutable: "no-cache, must-revalidate" });
    expect(config.cacheControl).toEqual({ immutable: "public, max-age=600", mutable: "no-cache, must-revalidate" });
  });
});
