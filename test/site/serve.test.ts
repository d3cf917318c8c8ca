import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { motoUnavailableReason, startMotoServer, type MotoServer } from "../helpers/moto-server.js";
import { publishDemoReleases, storeWorkspace } from "../helpers/published-store.js";
import { rawGet, startServe, type ServeProcess } from "../helpers/serve-process.js";
import type { Workspace } from "../helpers/workspace.js";

const motoReason = motoUnavailableReason();
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

async function get(url: string, headers: Record<string, string> = {}, method = "GET") {
  const res = await fetch(url, { headers, method });
  return { res, body: Buffer.from(await res.arrayBuffer()) };
}

const stores: Array<[string, boolean]> = [["folder store", false], ["S3 store (moto)", true]];

describe.each(stores)("relcast serve on a %s", (_name, s3) => {
  let moto: MotoServer | undefined;
  let ws: Workspace;
  let records: Array<Record<string, any>>;
  let server: ServeProcess;
  const skip = s3 && motoReason !== undefined;
  /** A record's public URL ({app_url}/…) on the local server. */
  const local = (publicUrl: string) => publicUrl.replace("https://updates.example.com", server.base);

  beforeAll(async () => {
    if (skip) return;
    if (s3) moto = await startMotoServer();
    ws = await storeWorkspace(moto);
    records = await publishDemoReleases(ws);
    // A file right next to the store: what a traversal would try to read.
    await writeFile(path.join(ws.dir, "outside-secret.txt"), "TOP-SECRET-OUTSIDE-THE-STORE\n");
    server = await startServe(["--config", ws.configFile]);
  });
  afterAll(async () => {
    await server?.stop();
    await moto?.stop();
  });

  it.skipIf(skip)("answers every public URL of every record with the right bytes and content type", async () => {
    for (const r of records) {
      const dmg = await get(local(r.publicDownloadUrl));
      expect(dmg.res.status).toBe(200);
      expect(dmg.res.headers.get("content-type")).toBe("application/x-apple-diskimage");
      expect(dmg.res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(sha256(dmg.body)).toBe(r.sha256);
      const zip = await get(local(r.autoupdate.publicDownloadUrl));
      expect(zip.res.headers.get("content-type")).toBe("application/zip");
      expect(sha256(zip.body)).toBe(r.autoupdate.sha256);
      expect(zip.body.length).toBe(r.autoupdate.sizeBytes);
    }
    const appcast = await get(local(records[0]!.publicAppcastUrl));
    expect(appcast.res.headers.get("content-type")).toBe("application/xml");
    expect(appcast.res.headers.get("cache-control")).toBe("no-cache");
    expect(appcast.body.toString()).toContain("<sparkle:shortVersionString>1.2.0</sparkle:shortVersionString>");
    const catalog = await get(`${server.base}/api/v1/plugins/bridge-plugin/releases.json`);
    expect(catalog.res.headers.get("content-type")).toBe("application/json");
    const parsed = JSON.parse(catalog.body.toString());
    expect(parsed.count).toBe(3);
    expect(parsed.versions.map((v: { version: string }) => v.version)).toEqual(["1.2.0", "1.1.0", "1.0.0"]);
    const latest = await get(`${server.base}/downloads/bridge-plugin-latest.dmg`);
    expect(latest.res.headers.get("cache-control")).toBe("no-cache");
    expect(sha256(latest.body)).toBe(records[2]!.sha256);
    for (const page of ["/", "/index.html", "/changelog.html"]) {
      const html = await get(`${server.base}${page}`);
      expect(html.res.status).toBe(200);
      expect(html.res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    }
  });

  it.skipIf(skip)("HEAD gives the headers without a body; ETag and Last-Modified are set", async () => {
    const url = local(records[0]!.publicDownloadUrl);
    const head = await get(url, {}, "HEAD");
    expect(head.res.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.res.headers.get("content-length")).toBe(String(records[0]!.sizeBytes));
    expect(head.res.headers.get("etag")).toMatch(/^"[^"]+"$/);
    expect(Date.parse(head.res.headers.get("last-modified")!)).not.toBeNaN();
    expect(head.res.headers.get("accept-ranges")).toBe("bytes");
  });

  it.skipIf(skip)("resumes a download with Range requests (206, Content-Range, 416 past the end, If-Range)", async () => {
    const r = records[2]!;
    const url = local(r.publicDownloadUrl);
    const size = r.sizeBytes as number;
    const first = await get(url, { range: "bytes=0-99999" });
    expect(first.res.status).toBe(206);
    expect(first.res.headers.get("content-range")).toBe(`bytes 0-99999/${size}`);
    expect(first.body.length).toBe(100000);
    const rest = await get(url, { range: "bytes=100000-" });
    expect(rest.res.status).toBe(206);
    expect(sha256(Buffer.concat([first.body, rest.body]))).toBe(r.sha256);
    const suffix = await get(url, { range: "bytes=-10" });
    expect(suffix.res.headers.get("content-range")).toBe(`bytes ${size - 10}-${size - 1}/${size}`);
    const past = await get(url, { range: `bytes=${size}-` });
    expect(past.res.status).toBe(416);
    expect(past.res.headers.get("content-range")).toBe(`bytes */${size}`);
    const etag = first.res.headers.get("etag")!;
    expect((await get(url, { range: "bytes=0-9", "if-range": etag })).res.status).toBe(206);
    const changed = await get(url, { range: "bytes=0-9", "if-range": '"not-the-etag"' });
    expect(changed.res.status).toBe(200);
    expect(changed.body.length).toBe(size);
  });

  it.skipIf(skip)("answers conditional GETs with 304 (If-None-Match, If-Modified-Since)", async () => {
    const url = local(records[0]!.publicAppcastUrl);
    const full = await get(url);
    const etag = full.res.headers.get("etag")!;
    const byTag = await get(url, { "if-none-match": `"other", ${etag}` });
    expect(byTag.res.status).toBe(304);
    expect(byTag.body.length).toBe(0);
    expect((await get(url, { "if-none-match": '"other"' })).res.status).toBe(200);
    expect((await get(url, { "if-modified-since": full.res.headers.get("last-modified")! })).res.status).toBe(304);
    expect((await get(url, { "if-modified-since": "Thu, 01 Jan 2004 00:00:00 GMT" })).res.status).toBe(200);
  });

  it.skipIf(skip)("never serves anything outside the store: traversal attempts get 400/404", async () => {
    const targets = [
      "/../outside-secret.txt", "/../../etc/passwd", "/downloads/../../outside-secret.txt", "/%2e%2e/outside-secret.txt",
      "/%2E%2E/%2e%2e/etc/passwd", "/downloads/%2e%2e%2f%2e%2e%2foutside-secret.txt", "/downloads/..%2f..%2foutside-secret.txt",
      "/downloads/..%5c..%5coutside-secret.txt", "/downloads\\..\\..\\outside-secret.txt", "//etc/passwd", "/./index.html",
      "/downloads/%00", "/etc/passwd%00.dmg", "http://evil.example/etc/passwd", "/.relcast-lock-catalog.json", "/%252e%252e/outside-secret.txt",
    ];
    for (const target of targets) {
      const res = await rawGet(server.base, target);
      expect([400, 404], `${target} → ${res.status}`).toContain(res.status);
      expect(res.body).not.toContain("TOP-SECRET");
      expect(res.body).not.toContain("root:");
    }
    // The folder itself is still readable the normal way.
    expect((await rawGet(server.base, "/index.html")).status).toBe(200);
  });

  it.skipIf(skip)("refuses methods other than GET and HEAD with 405", async () => {
    const res = await rawGet(server.base, "/index.html", "DELETE");
    expect(res.status).toBe(405);
    expect(res.head.toLowerCase()).toContain("allow: get, head");
    if (!s3) expect(await readFile(path.join(ws.storeDir, "index.html"), "utf8")).toContain("<!doctype html>");
  });
});
