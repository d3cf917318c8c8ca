import { describe, expect, it } from "vitest";
import { closestName, editDistance } from "../../src/core/closest-name.js";
import { describeZodIssues } from "../../src/core/zod-message.js";
import { configSchema } from "../../src/config/schema.js";

describe("closestName: the field a misspelled name meant", () => {
  it("counts an insertion, a deletion, a change and a swap of neighbours as one edit each, ignoring case", () => {
    expect(editDistance("displyName", "displayName")).toBe(1);
    expect(editDistance("dispalyName", "displayName")).toBe(1);
    expect(editDistance("appURL", "appUrl")).toBe(0);
    expect(editDistance("publisherr", "publisher")).toBe(1);
    expect(editDistance("kitten", "sitting")).toBe(3);
  });

  it("suggests only a near name, never a guess", () => {
    const names = ["pluginId", "displayName", "publisher", "appUrl", "store", "channel"];
    expect(closestName("displyName", names)).toBe("displayName");
    expect(closestName("stroe", names)).toBe("store");
    expect(closestName("colour", names)).toBeUndefined();
    expect(closestName("x", names)).toBeUndefined();
  });
});

describe("config messages name the field an unknown one was meant to be", () => {
  const base = { pluginId: "p", displayName: "P", publisher: "X", appUrl: "https://a.example", store: "file://./s" };
  const message = (raw: Record<string, unknown>) => {
    const parsed = configSchema.safeParse(raw);
    expect(parsed.success).toBe(false);
    return describeZodIssues(parsed.error!, "relcast.config.json", raw, configSchema);
  };

  it("at the top level and inside a nested object", () => {
    expect(message({ ...base, chanel: "beta" })).toContain('unknown field "chanel" (did you mean "channel"?)');
    const nested = message({ ...base, s3: { endpiont: "http://127.0.0.1:9000" } });
    expect(nested).toContain('unknown field "endpiont" (did you mean "endpoint"?) in "s3"');
  });

  it("says nothing it cannot back: an unknown field with no near name is only named", () => {
    expect(message({ ...base, colour: "red" })).toMatch(/unknown field "colour"$/m);
  });
});
