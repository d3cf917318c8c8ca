import { describe, expect, it } from "vitest";
import { OPT_OUT_WARNING, writeGuard } from "../../src/store/s3-write-guard.js";

describe("the write guard of one opened S3 store", () => {
  it("proves once for every write of the store, also when writes start together", async () => {
    let proofs = 0;
    const guard = writeGuard("prove", async () => void proofs++, () => expect.unreachable("no warning"));
    await Promise.all([guard(), guard(), guard()]);
    await guard();
    expect(proofs).toBe(1);
  });

  it("does not remember a failed proof: every later write is refused again (and proves again)", async () => {
    let proofs = 0;
    const guard = writeGuard("prove", async () => {
      proofs++;
      throw new Error("store accepted a second create-only put");
    }, () => undefined);
    await expect(guard()).rejects.toThrow(/second create-only/);
    await expect(guard()).rejects.toThrow(/second create-only/);
    expect(proofs).toBe(2);
  });

  it("the opt-out proves nothing and warns once per run", async () => {
    const warnings: string[] = [];
    const guard = writeGuard("unverified-single-writer", async () => expect.unreachable("no proof"), (m) => warnings.push(m));
    await guard();
    await guard();
    expect(warnings).toEqual([OPT_OUT_WARNING]);
    expect(OPT_OUT_WARNING).toMatch(/releases can be lost from the catalog without an error/);
  });
});
