import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hardwareRequirementsOf, machOArchitectures } from "../../src/bundle/mach-o.js";
import { CPU, fatMachO, thinMachO } from "../helpers/mach-o-bytes.js";


describe("Mach-O architectures", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "relcast-macho-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const cases: Array<[string, Buffer, string[] | undefined]> = [
    ["thin arm64", thinMachO(CPU.arm64), ["arm64"]],
    ["thin x86_64", thinMachO(CPU.x86_64), ["x86_64"]],
    ["universal x86_64 + arm64", fatMachO([CPU.x86_64, CPU.arm64]), ["x86_64", "arm64"]],
    ["universal arm64 only", fatMachO([CPU.arm64]), ["arm64"]],
    ["universal i386 + ppc", fatMachO([CPU.i386, CPU.ppc]), ["i386", "ppc"]],
    ["a shell script", Buffer.from("#!/bin/sh\necho hi\n"), undefined],
    ["a Java class file (same magic)", Buffer.from("cafebabe0000003d000a0a", "hex"), undefined],
  ];

  it.each(cases)("reads %s", async (name, bytes, want) => {
    expect(machOArchitectures(bytes)).toEqual(want);
    // The independent reading: file(1)'s magic database names the same slices.
    const file = path.join(dir, name.replace(/\W+/g, "-"));
    await writeFile(file, bytes);
    const said = execFileSync("file", ["-b", file], { encoding: "utf8" });
    if (want === undefined) expect(said).not.toMatch(/Mach-O/);
    else for (const arch of want) expect(said).toContain(arch === "i386" ? "i386" : arch);
  });

  it("asks for Apple silicon only when no slice runs on an Intel Mac, and not from macOS 27 on", () => {
    expect(hardwareRequirementsOf(["arm64"], "12.0")).toBe("arm64");
    expect(hardwareRequirementsOf(["arm64"], undefined)).toBe("arm64");
    expect(hardwareRequirementsOf(["x86_64", "arm64"], "12.0")).toBeUndefined();
    expect(hardwareRequirementsOf(["arm64"], "27.0")).toBeUndefined();
    expect(hardwareRequirementsOf(["arm64"], "26.4")).toBe("arm64");
    expect(hardwareRequirementsOf(["ppc"], "10.4")).toBeUndefined();
    expect(hardwareRequirementsOf(undefined, "12.0")).toBeUndefined();
  });
});
