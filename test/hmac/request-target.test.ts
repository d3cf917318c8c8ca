import { describe, expect, it } from "vitest";
import { requestTargetProblem, resolveRequestTarget, withoutQuery } from "../../src/hmac/request-target.js";

describe("request target", () => {
  it("uses a path exactly as given", () => {
    for (const target of ["/", "/a?b=2&a=1", "/a?%7e=%7E", "/a;p?x=1&x=1", "/a?"]) {
      expect(resolveRequestTarget(target)).toEqual({ ok: true, value: { target } });
    }
  });

  it("reduces an absolute URL to what fetch sends", () => {
    expect(resolveRequestTarget("HTTPS://gw.example:8443/v2/a?x=1#f")).toEqual({ ok: true, value: { target: "/v2/a?x=1" } });
    expect(resolveRequestTarget("http://gw.example/a b")).toEqual({ ok: true, value: { target: "/a%20b", rewrittenFrom: "/a b" } });
    expect(resolveRequestTarget("http://[bad")).toMatchObject({ ok: false });
  });

  it("names what cannot be on the wire", () => {
    expect(requestTargetProblem("a")).toMatch(/start with/);
    expect(requestTargetProblem("/a\tb")).toMatch(/U\+0009 at column 3/);
    expect(requestTargetProblem("/\u00e9")).toMatch(/U\+00E9/);
    expect(requestTargetProblem("/a#b")).toMatch(/fragments/);
    expect(requestTargetProblem("/a?b=1")).toBeUndefined();
  });

  it("cuts the deprecated form at the first ?", () => {
    expect(withoutQuery("/a?b?c")).toBe("/a");
    expect(withoutQuery("/a?")).toBe("/a");
    expect(withoutQuery("/a")).toBeUndefined();
  });
});
