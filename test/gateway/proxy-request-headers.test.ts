import { describe, expect, it } from "vitest";
import { upstreamFraming, upstreamRequestHeaders } from "../../src/gateway/proxy-headers.js";

const identity = { kind: "company" as const, clientId: "hmac-crm-acme", company: "acme", product: "crm" };
const forwarded = { for: "203.0.113.7", proto: "https" as const };

/** Header lines as [lower-case name, value] pairs. */
function lines(list: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < list.length; i += 2) out.push([list[i]!.toLowerCase(), list[i + 1]!]);
  return out;
}

describe("upstream request headers", () => {
  it("frames the body from what node parsed, whatever the Connection list names", () => {
    const incoming = { host: "gw", connection: "keep-alive, content-length, transfer-encoding", "content-length": "12" };
    const out = lines(upstreamRequestHeaders(incoming, identity, "crm", "up:1", forwarded, upstreamFraming(incoming, undefined)));
    expect(out.filter(([n]) => n === "content-length")).toEqual([["content-length", "12"]]);
    expect(out.some(([n]) => n === "transfer-encoding" || n === "connection")).toBe(false);
  });

  it("sends a chunked body chunked and a body read whole with its own length", () => {
    const chunked = { host: "gw", "transfer-encoding": "chunked" };
    expect(upstreamFraming(chunked, undefined)).toEqual({ kind: "chunked" });
    expect(lines(upstreamRequestHeaders(chunked, identity, "crm", "up", forwarded, { kind: "chunked" }))).toContainEqual(["transfer-encoding", "chunked"]);
    expect(upstreamFraming({ "content-length": "99" }, Buffer.from("abc"))).toEqual({ kind: "length", length: 3 });
    expect(upstreamFraming({ "content-length": "0" }, undefined)).toEqual({ kind: "none" });
    expect(upstreamFraming({}, undefined)).toEqual({ kind: "none" });
  });

  it("drops identity, forwarding and override headers in every spelling, and sets its own once", () => {
    const incoming = {
      host: "gw",
      "x_relcast_company": "globex",
      "x-relcast-company": "globex",
      "x_relcast_user": "admin",
      "x-relcast-scope": "admin",
      "x-forwarded-prefix": "/admin",
      "x_forwarded_for": "10.0.0.1",
      "x-real-ip": "10.0.0.1",
      "x-http-method-override": "DELETE",
      "x_http_method": "DELETE",
      "x-method-override": "DELETE",
      "x-original-url": "/v1/admin",
      "x-rewrite-url": "/v1/admin",
      "content_length": "5",
      authorization: "HMAC x",
      "x.relcast.user": "admin",
      "x.http.method.override": "DELETE",
      "x.forwarded.for": "10.0.0.2",
      "x-method": "DELETE",
      "x-original-host": "admin.internal",
      "remote-user": "admin",
      "x-envoy-original-path": "/v1/admin",
      "x-kept": "yes",
      "x_kept_too": "yes",
    };
    const out = lines(upstreamRequestHeaders(incoming, identity, "crm", "up:1", forwarded, { kind: "none" }));
    const comparable = out.map(([n, v]): [string, string] => [n.replace(/[^a-z0-9]+/g, "-"), v]);
    expect(comparable.filter(([n]) => n === "x-relcast-company")).toEqual([["x-relcast-company", "acme"]]);
    expect(comparable.filter(([n]) => n.startsWith("x-relcast-")).map(([n]) => n).sort()).toEqual(["x-relcast-auth", "x-relcast-client", "x-relcast-company", "x-relcast-product"]);
    expect(comparable.filter(([n]) => n.startsWith("x-forwarded-"))).toEqual([
      ["x-forwarded-for", "203.0.113.7"],
      ["x-forwarded-proto", "https"],
      ["x-forwarded-host", "gw"],
    ]);
    for (const name of ["x-http-method-override", "x-http-method", "x-method-override", "x-original-url", "x-rewrite-url", "x-real-ip", "content-length", "authorization", "x-method", "x-original-host", "remote-user", "x-envoy-original-path"]) {
      expect(comparable.some(([n]) => n === name), name).toBe(false);
    }
    expect(out).toContainEqual(["x-kept", "yes"]);
    expect(out).toContainEqual(["x_kept_too", "yes"]);
    expect(out.filter(([n]) => n === "host")).toEqual([["host", "up:1"]]);
  });
});
