import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "./harness.js";
import { tokensFor } from "./oauth-driver.js";

const noHmac = () => ({ ok: false as const, check: "signature", message: "unused" });

describe("proxy streams bodies", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(noHmac);
  });
  afterAll(() => h.close());

  it("delivers the first request chunk upstream before the client finished sending, and streams the response", async () => {
    const { access_token } = await tokensFor(h);
    let firstChunkSeen: () => void = () => {};
    const firstChunk = new Promise<void>((resolve) => (firstChunkSeen = resolve));
    h.upstream.onRequest = (req, res) => {
      req.once("data", () => {
        firstChunkSeen();
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("early ");
      });
      req.on("end", () => res.end("done"));
      return true;
    };
    const url = new URL(h.gateway.url);
    const body = await new Promise<string>((resolve, reject) => {
      const req = http.request(
        { host: url.hostname, port: url.port, method: "POST", path: "/v2/crm/v1/upload", headers: { authorization: `Bearer ${access_token}`, "transfer-encoding": "chunked" } },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => {
            text += c;
            // Only after the upstream answered the first chunk does the client send the rest.
            if (text === "early ") req.end("second chunk");
          });
          res.on("end", () => resolve(text));
        },
      );
      req.on("error", reject);
      req.write("first chunk");
      firstChunk.catch(reject);
    });
    expect(body).toBe("early done");
    h.upstream.onRequest = undefined;
  });

  it("answers 502 when the upstream is down", async () => {
    const { access_token } = await tokensFor(h);
    await h.upstream.close();
    const res = await fetch(`${h.gateway.url}/v2/crm/v1/x`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ error: "upstream_unavailable" });
  });
});
