import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RelcastError } from "../../src/core/errors.js";
import { createS3Store } from "../../src/store/s3-store.js";

/** A loopback server that answers 503 a set number of times, then 200, counting requests. */
let server: Server;
let endpoint = "";
let failuresLeft = 0;
let requests = 0;

beforeAll(async () => {
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: "test", AWS_SECRET_ACCESS_KEY: "test" });
  server = createServer((req, res) => {
    requests++;
    req.resume();
    if (failuresLeft > 0) {
      failuresLeft--;
      res.writeHead(503, { "content-type": "application/xml" }).end("<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>");
    } else {
      res.writeHead(200, { "x-amz-bucket-region": "us-east-1" }).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("S3 store retries", () => {
  const store = () => createS3Store({ bucket: "retry-bucket", region: "us-east-1", endpoint, forcePathStyle: true });

  it("retries 503 SlowDown with backoff and succeeds", async () => {
    requests = 0;
    failuresLeft = 3;
    await store().checkReachable();
    expect(requests).toBe(4);
  });

  it("gives up after 5 attempts with an E_STORE error", async () => {
    requests = 0;
    failuresLeft = 100;
    const err = await store().checkReachable().catch((e: unknown) => e);
    expect(requests).toBe(5);
    expect(err).toBeInstanceOf(RelcastError);
    expect((err as RelcastError).code).toBe("E_STORE");
    expect((err as RelcastError).message).toMatch(/HTTP 503/);
    expect((err as RelcastError).hint).toMatch(/after retries/);
  });
});
