import { afterEach, describe, expect, it, vi } from "vitest";
import { reportError } from "../../src/cli/report-error.js";
import { EXIT_CODES, RelcastError } from "../../src/core/errors.js";

/** A full disk is the machine's state, not relcast's bug: a clear error naming the file and the fix, not "internal error". */
describe("reportError on a full disk", () => {
  afterEach(() => vi.restoreAllMocks());

  function report(err: unknown): { code: number; text: string } {
    const lines: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
    const code = reportError(err, { debug: false });
    return { code, text: lines.join("") };
  }

  it.each([
    ["ENOSPC", "no space left on the device while writing /tmp/t/relcast-zip-1/out.zip"],
    ["EDQUOT", "the disk quota is used up while writing /tmp/t/relcast-zip-1/out.zip"],
  ])("%s names the file and says to free space, exit E_INPUT, no bug report", (code, sentence) => {
    const err = Object.assign(new Error(`${code}: no space left on device, write`), { code, path: "/tmp/t/relcast-zip-1/out.zip" });
    const r = report(err);
    expect(r.code).toBe(EXIT_CODES.E_INPUT);
    expect(r.text).toContain(`relcast: error [E_INPUT]: ${sentence}`);
    expect(r.text).toContain("free space there");
    expect(r.text).not.toContain("internal error");
    expect(r.text).not.toContain("report the output");
  });

  it("copyFile's ENOSPC names the file it was writing (dest), not its source", () => {
    const err = Object.assign(new Error("ENOSPC: no space left on device, copyfile"), { code: "ENOSPC", path: "/tmp/relcast-1/disk-image.dmg", dest: "/store/releases/1.2.0/.relcast-tmp-1" });
    expect(report(err).text).toContain("while writing /store/releases/1.2.0/.relcast-tmp-1");
  });

  it("a message quoting a name read from a store prints no raw control character and no line a CI runner would run as a command", () => {
    const err = new RelcastError("E_STORE", "record releases/2.0.0\n::error title=REB::injected\u001b[31m/release.json is not JSON", "remove it");
    const r = report(err);
    expect(r.code).toBe(EXIT_CODES.E_STORE);
    expect(r.text.split("\n").some((line) => line.trimStart().startsWith("::"))).toBe(false);
    expect(r.text).not.toContain("\u001b");
    expect(r.text).toContain("\\x1b[31m");
  });

  it("any other unexpected error is still an internal error with the bug-report hint", () => {
    const r = report(Object.assign(new Error("boom"), { code: "EWHATEVER" }));
    expect(r.code).toBe(EXIT_CODES.E_INTERNAL);
    expect(r.text).toContain("relcast: internal error: boom");
  });
});
