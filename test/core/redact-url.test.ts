import { describe, expect, it } from "vitest";
import { redactUrl } from "../../src/core/redact-url.js";
import { describeStoreLocation } from "../../src/store/store-location.js";
import { mapS3Error } from "../../src/store/s3-errors.js";
import { RelcastError } from "../../src/core/errors.js";
import { describePostgresUrl } from "../../src/gateway/state/postgres-driver.js";

const endpoint = "http://user:s3cr3tPW@127.0.0.1:1/?X-Amz-Signature=abc";

/** Store URLs and endpoints are printed without the password of their userinfo and without their query. */
describe("redacting URLs in messages", () => {
  it("hides the password, the query and the fragment, keeps host and user", () => {
    expect(redactUrl(endpoint)).toBe("http://user:***@127.0.0.1:1/?***");
    expect(redactUrl("https://minio.example.com:9000/base#tok")).toBe("https://minio.example.com:9000/base#***");
    expect(redactUrl("http://127.0.0.1:9000")).toBe("http://127.0.0.1:9000");
    expect(redactUrl("ftp://x")).toBe("ftp://x");
    expect(redactUrl("not a url user:pw@host?sig=1")).not.toMatch(/pw|sig=1/);
  });

  it("describeStoreLocation and every S3 error hint leave the secret out", () => {
    const text: string[] = [describeStoreLocation({ scheme: "s3", bucket: "b", prefix: "p" } as never, endpoint)];
    const network = Object.assign(new Error(`connect ECONNREFUSED while calling ${endpoint}`), { code: "ECONNREFUSED" });
    const noBucket = Object.assign(new Error("no such bucket"), { name: "NoSuchBucket", $metadata: { httpStatusCode: 404 } });
    for (const err of [network, noBucket]) {
      const mapped = mapS3Error(err, { operation: "HeadBucket", bucket: "b", endpoint });
      expect(mapped).toBeInstanceOf(RelcastError);
      text.push(mapped.message, (mapped as RelcastError).hint ?? "");
    }
    const all = text.join("\n");
    expect(all).toContain("127.0.0.1:1");
    expect(all).not.toContain("s3cr3tPW");
    expect(all).not.toContain("X-Amz-Signature");
    expect(all).not.toContain("abc");
  });

  it("PostgreSQL URLs lose a password given in the query too", () => {
    expect(describePostgresUrl("postgres://u:pw1@127.0.0.1:5/db?password=pw2")).not.toMatch(/pw1|pw2/);
  });
});

describe("messages that quote a URL given with a password hide it", () => {
  it("store URLs relcast cannot open (from --store or the config)", async () => {
    const { storeUrlProblem } = await import("../../src/core/store-url.js");
    for (const url of ["s3://AKIAX:S3cretPW@bucket/prefix", "file://bob:S3cretPW@host/x", "https://bob:S3cretPW@store.example.com/"]) {
      const problem = storeUrlProblem(url)!;
      expect(problem).toBeDefined();
      expect(problem).not.toContain("S3cretPW");
      expect(problem).toMatch(/\*\*\*|rest hidden/);
    }
  });

  it("URL flags (--link, notes URL templates) refused for their password", async () => {
    const { urlTemplate } = await import("../../src/domain/flag-values.js");
    let message = "";
    try {
      urlTemplate("--link", "https://bob:S3cretPW@ex.com/x", "1.0.0");
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain("user name or password");
    expect(message).not.toContain("S3cretPW");
  });
});
