import { describe, expect, it } from "vitest";
import { dateSkew, parseHttpDate } from "../../../src/gateway/middleware/date-skew.js";
import { runMiddleware } from "./run-middleware.js";

const mw = dateSkew({ maxSkewSeconds: 300 });
const at = (iso: string) => new Date(iso).toUTCString();

describe("dateSkew", () => {
  it("passes a Date within 300 s either way", async () => {
    expect((await runMiddleware(mw, { headers: { date: at("2025-03-01T10:04:59Z") } })).passed).toBe(true);
    expect((await runMiddleware(mw, { headers: { date: at("2025-03-01T09:55:01Z") } })).passed).toBe(true);
  });

  it("rejects 300 s or more of skew, a missing Date and a malformed Date with 401 + hmac challenge", async () => {
    const cases = [
      [at("2025-03-01T10:05:00Z"), "date-skew"],
      [at("2025-03-01T09:55:00Z"), "date-skew"],
      [undefined, "date-missing"],
      ["2025-03-01T10:00:00Z", "date-format"],
      ["Sat, 01 Mar 2025 10:00:00 UTC", "date-format"],
    ] as const;
    for (const [date, check] of cases) {
      const r = await runMiddleware(mw, { headers: date ? { date } : {} });
      expect(r.passed).toBe(false);
      expect(r.error?.status).toBe(401);
      expect(r.error?.extra).toEqual({ check });
      expect(String(r.error?.headers["www-authenticate"])).toMatch(/^hmac /);
    }
  });

  it("parses only exact IMF-fixdate values", () => {
    expect(parseHttpDate("Sat, 01 Mar 2025 10:00:00 GMT")?.toISOString()).toBe("2025-03-01T10:00:00.000Z");
    expect(parseHttpDate("Mon, 01 Mar 2025 10:00:00 GMT")).toBeUndefined(); // wrong weekday
    expect(parseHttpDate("Sat, 31 Feb 2025 10:00:00 GMT")).toBeUndefined();
  });
});
