import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { s3OptionsFrom } from "../../src/store/s3-store-factory.js";

const base = { pluginId: "demo", displayName: "Demo", publisher: "P", appUrl: "https://a.example", store: "s3://bucket/prefix" };

describe("s3 upload settings in relcast.config.json", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "relcast-s3opt-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function configWith(s3: Record<string, unknown>) {
    const file = path.join(dir, `c-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, JSON.stringify({ ...base, s3 }));
    return loadConfig(file);
  }

  it("maps uploadConcurrency and partSizeMiB onto the store's multipart options", async () => {
    const config = await configWith({ uploadConcurrency: 10, partSizeMiB: 16, forcePathStyle: true });
    const options = s3OptionsFrom("bucket", "prefix", { s3: config.s3 });
    expect(options).toMatchObject({ bucket: "bucket", prefix: "prefix", queueSize: 10, partSizeBytes: 16 * 1024 * 1024, forcePathStyle: true });
  });

  it("leaves the defaults to the store when they are not set", async () => {
    const options = s3OptionsFrom("bucket", "", { s3: (await configWith({})).s3 });
    expect(options).not.toHaveProperty("queueSize");
    expect(options).not.toHaveProperty("partSizeBytes");
  });

  it("passes the conditional-write opt-out to the store only when it is spelled out", async () => {
    expect(s3OptionsFrom("bucket", "", { s3: (await configWith({})).s3 })).not.toHaveProperty("conditionalWrites");
    const options = s3OptionsFrom("bucket", "", { s3: (await configWith({ conditionalWrites: "unverified-single-writer" })).s3 });
    expect(options).toMatchObject({ conditionalWrites: "unverified-single-writer" });
  });

  it.each([
    [{ conditionalWrites: false }, /s3\.conditionalWrites/],
    [{ conditionalWrites: "off" }, /s3\.conditionalWrites/],
    [{ conditionalWrites: "single-writer" }, /s3\.conditionalWrites/],
    [{ partSizeMiB: 4 }, /s3\.partSizeMiB/],
    [{ uploadConcurrency: 0 }, /s3\.uploadConcurrency/],
    [{ uploadConcurrency: 2.5 }, /s3\.uploadConcurrency/],
  ])("refuses %j, naming the field", async (s3, field) => {
    const err = await configWith(s3).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "E_CONFIG" });
    expect((err as Error).message).toMatch(field);
  });
});
