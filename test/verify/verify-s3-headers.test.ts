import "../helpers/python-without-shim.js"; // python3 and the aws cli without a version manager's shim (see there)
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startS3Probe, type S3Probe } from "../helpers/boto3-probe.js";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { runCli } from "../helpers/run-cli.js";
import { makeWorkspace, type Workspace } from "../helpers/workspace.js";

const reason = motoUnavailableReason();
const IMMUTABLE = "public, max-age=31536000, immutable";

interface Headers { ContentType: string; CacheControl?: string | undefined; ContentEncoding?: string; ContentDisposition?: string; WebsiteRedirectLocation?: string }

/**
 * Headers are part of what the store serves: an appcast made immutable freezes
 * Sparkle clients behind a CDN, a zip served as text/html is a page. verify
 * compares each object's Content-Type and Cache-Control (from the HEAD/GET it
 * makes anyway) with what relcast writes for that key.
 */
describe.skipIf(Boolean(reason))(`verify compares S3 objects' headers with what relcast writes${reason ? ` — skipped: ${reason}` : ""}`, () => {
  let moto: MotoServer;
  let ws: Workspace;
  const bucket = `hdr-${randomBytes(4).toString("hex")}`;
  // The objects' headers are read and set by boto3 (botocore, what the aws cli is made of), one Python for the file
  // instead of an aws cli process per call.
  let s3: S3Probe;
  const head = async (key: string): Promise<Headers> => {
    const h = await s3.call<Headers>("head_object", { Bucket: bucket, Key: `site/${key}` });
    return { ContentType: h.ContentType, ...(h.CacheControl !== undefined && { CacheControl: h.CacheControl }) };
  };
  // A REPLACE copy sets exactly the headers given: any other one the object had (Content-Encoding…) is dropped.
  const setHeaders = (key: string, headers: Headers) =>
    s3.call("copy_object", { Bucket: bucket, Key: `site/${key}`, CopySource: `${bucket}/site/${key}`, MetadataDirective: "REPLACE", ...headers });
  const verify = async () => {
    const r = await runCli(["verify", "--config", ws.configFile]);
    return { code: r.code, out: r.stdout + r.stderr };
  };

  beforeAll(async () => {
    moto = await startMotoServer();
    s3 = startS3Probe(moto.endpoint);
    ws = await makeWorkspace({ store: `s3://${bucket}/site`, s3: { endpoint: moto.endpoint, forcePathStyle: true, region: "us-east-1" } });
    await s3.call("create_bucket", { Bucket: bucket });
    for (const [v, b] of [["1.0.0", 100], ["1.1.0", 110]] as const) {
      const r = await runCli(ws.publishArgs(await ws.plugin(v, b), v, ["--quiet"]));
      expect(r.code, r.stderr).toBe(0);
    }
  }, 240_000);

  afterAll(async () => {
    await s3?.close();
    await moto?.stop();
  });

  it("a store relcast wrote passes: every header it reads is the one relcast wrote", async () => {
    const r = await verify();
    expect(r.code, r.out).toBe(0);
    expect(r.out).not.toMatch(/served with/);
  }, 120_000);

  // Each case: the headers it is given, and each problem it must be named in (objects with the same wrong value share one line).
  const cases: Array<{ key: string; set: Headers; expect: RegExp[] }> = [
    { key: "releases/catalog.json", set: { ContentType: "application/json", CacheControl: IMMUTABLE }, expect: [/served with Cache-Control "public, max-age=31536000, immutable"; relcast writes "no-cache" \(a CDN/] },
    { key: "api/v1/plugins/bridge-plugin/appcast.xml", set: { ContentType: "application/xml", CacheControl: IMMUTABLE }, expect: [/served with Cache-Control "public, max-age=31536000, immutable"; relcast writes "no-cache"/] },
    { key: "downloads/bridge-plugin-1.1.0.zip", set: { ContentType: "text/html", CacheControl: IMMUTABLE }, expect: [/served with Content-Type "text\/html"; relcast writes "application\/zip"/] },
    { key: "downloads/bridge-plugin-latest.json", set: { ContentType: "text/html", CacheControl: IMMUTABLE }, expect: [/served with Content-Type "text\/html"; relcast writes "application\/json"/, /served with Cache-Control "public, max-age=31536000, immutable"; relcast writes "no-cache"/] },
    { key: "index.html", set: { ContentType: "application/octet-stream" }, expect: [/served with Content-Type "application\/octet-stream"; relcast writes "text\/html; charset=utf-8"/, /served with Cache-Control \(none\); relcast writes "no-cache"/] },
    { key: "releases/1.0.0/bridge-plugin-1.0.0.dmg", set: { ContentType: "application/x-apple-diskimage", CacheControl: "no-store" }, expect: [/served with Cache-Control "no-store"; relcast writes "public, max-age=31536000, immutable"/] },
    // Headers relcast never writes that change what a client gets: a feed Sparkle would gunzip, a page saved as a file, a download redirected away.
    { key: "releases/appcast.xml", set: { ContentType: "application/xml", CacheControl: "no-cache", ContentEncoding: "gzip" }, expect: [/served with Content-Encoding "gzip"; relcast writes none \(a client decodes/] },
    { key: "releases/1.0.0/bridge-plugin-1.0.0.zip", set: { ContentType: "application/zip", CacheControl: IMMUTABLE, ContentDisposition: "inline; filename=\"other.zip\"" }, expect: [/served with Content-Disposition "inline; filename=\\"other\.zip\\""; relcast writes none/] },
    { key: "downloads/bridge-plugin-1.0.0.zip", set: { ContentType: "application/zip", CacheControl: IMMUTABLE, WebsiteRedirectLocation: "https://example.com/evil.zip" }, expect: [/served with x-amz-website-redirect-location "https:\/\/example\.com\/evil\.zip"; relcast writes none \(S3 website hosting/] },
  ];

  // All changed at once and judged by one verify run (each object's own message is asserted), then put back.
  it("each object with other headers is a problem naming what it has, what it should have and the aws command that fixes it; the fix puts the store back", async () => {
    const before = await Promise.all(cases.map((c) => head(c.key)));
    for (const c of cases) await setHeaders(c.key, c.set);
    try {
      const r = await verify();
      expect(r.code, r.out).toBe(11);
      const lines = r.out.split("\n").filter((line) => line.includes("is served with") || line.includes("are served with"));
      for (const c of cases) {
        for (const message of c.expect) {
          // The object is named (by its full URI, so no other key's name contains it) on a line with that mismatch and the aws fix.
          const line = lines.find((l) => message.test(l) && new RegExp(`s3://${bucket}/site/${c.key.replace(/[.]/g, "\\.")}(,| is| are)`).test(l));
          expect(line, `${c.key} ${message}\n${r.out}`).toBeDefined();
          expect(line).toMatch(/aws s3 cp s3:\/\/\S+ s3:\/\/\S+ --metadata-directive REPLACE/);
        }
      }
    } finally {
      for (const [i, c] of cases.entries()) await setHeaders(c.key, before[i]!);
    }
    const after = await verify();
    expect(after.code, after.out).toBe(0);
  }, 240_000);
});
