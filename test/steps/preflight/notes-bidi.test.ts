/**
 * Bidirectional controls in notes and changelog files are refused where the
 * file is read (E_INPUT), naming the file, line, column and character, and
 * how to find and remove them: a page or the update window would show the
 * notes in another order than they are written (another version, even).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isRelcastError } from "../../../src/core/errors.js";
import { readChangelogNotes, readReleaseNotes } from "../../../src/steps/preflight/notes-file.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "notes-bidi-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function refused(run: () => Promise<unknown>): Promise<{ code: string; message: string; hint: string | undefined }> {
  const err = await run().then(() => undefined, (e: unknown) => e);
  if (!isRelcastError(err)) throw new Error(`expected a refusal, got ${String(err)}`);
  return err;
}

const CONTROLS: Array<[number, string]> = [
  [0x202a, "LEFT-TO-RIGHT EMBEDDING"], [0x202b, "RIGHT-TO-LEFT EMBEDDING"], [0x202c, "POP DIRECTIONAL FORMATTING"], [0x202d, "LEFT-TO-RIGHT OVERRIDE"],
  [0x202e, "RIGHT-TO-LEFT OVERRIDE"], [0x2066, "LEFT-TO-RIGHT ISOLATE"], [0x2067, "RIGHT-TO-LEFT ISOLATE"], [0x2068, "FIRST STRONG ISOLATE"],
  [0x2069, "POP DIRECTIONAL ISOLATE"], [0x200e, "LEFT-TO-RIGHT MARK"], [0x200f, "RIGHT-TO-LEFT MARK"], [0x061c, "ARABIC LETTER MARK"],
];

describe("bidi controls in notes files", () => {
  const rows = CONTROLS.map(([cp, name]) => ({ cp, name, hex: cp.toString(16).toUpperCase().padStart(4, "0") }));
  it.each(rows)("U+$hex ($name) in a notes file is refused with file, line, column and the fix", async ({ cp, name, hex }) => {
    const file = path.join(dir, `notes-${cp.toString(16)}.md`);
    // Line 3, after "- Fixes é" (9 characters, one of them two bytes): column 10.
    await writeFile(file, `## Changes\n\n- Fixes é${String.fromCodePoint(cp)}1.2.3 crash\n`);
    const err = await refused(() => readReleaseNotes(file));
    expect(err.code).toBe("E_INPUT");
    expect(err.message).toContain(`notes file ${file}: line 3, column 10: character U+${hex} (${name}) is a bidirectional control`);
    expect(err.hint).toContain("remove the character");
    expect(err.hint).toContain(file);
  });

  it("in this version's section of a changelog too, and in a localized notes file", async () => {
    const changelog = path.join(dir, "CHANGELOG.md");
    await writeFile(changelog, "# Changelog\n\n## [1.2.0] - 2026-11-01\n\n- Safe \u2067text\u2069\n");
    const err = await refused(() => readChangelogNotes(changelog, "1.2.0"));
    expect(err.message).toMatch(/changelog .*CHANGELOG\.md: line 5, column 8: character U\+2067 \(RIGHT-TO-LEFT ISOLATE\)/);
    const localized = path.join(dir, "notes.ar.md");
    await writeFile(localized, "- \u0625\u0635\u0644\u0627\u062d \u200f2.0\n");
    expect((await refused(() => readReleaseNotes(localized, "--localized-notes ar="))).message).toMatch(/line 1, column 9: character U\+200F/);
  });

  it.each([
    ["&#x202E;", "U+202E"], ["&#8238;", "U+202E"], ["&rlm;", "U+200F"], ["&lrm;", "U+200E"], ["&#X2067;", "U+2067"], ["&#x61c;", "U+061C"],
  ])("the character reference %s, which Markdown renders as %s, is refused in notes, changelog and localized files", async (ref, hex) => {
    const file = path.join(dir, "notes-ref.md");
    await writeFile(file, `- Fixed ${ref}gpj.exe crash\n`);
    const err = await refused(() => readReleaseNotes(file));
    expect(err.code).toBe("E_INPUT");
    // "- Fixed " is 8 characters: the reference starts at column 9.
    expect(err.message).toContain(`notes file ${file}: line 1, column 9: "${ref}" renders as a bidirectional control: character ${hex}`);
    expect(err.hint).toContain("character reference");
    const changelog = path.join(dir, "CHANGELOG-ref.md");
    await writeFile(changelog, `# Changelog\n\n## [1.2.0] - 2026-11-01\n\n- Safe ${ref}text\n`);
    expect((await refused(() => readChangelogNotes(changelog, "1.2.0"))).message).toContain(`character ${hex}`);
    expect((await refused(() => readReleaseNotes(file, "--localized-notes de="))).code).toBe("E_INPUT");
  });

  it("a percent-encoded control in an autolink (its text shows it decoded) is refused with line and column", async () => {
    const file = path.join(dir, "notes-autolink.md");
    await writeFile(file, "## Fixes\n\n- Crash fixed\n- See <https://example.com/%E2%80%AEgpj.exe> and &amp; more\n");
    const err = await refused(() => readReleaseNotes(file));
    expect(err.code).toBe("E_INPUT");
    expect(err.message).toContain(`notes file ${file}: line 4, column 28: "%E2%80%AE" renders as a bidirectional control: character U+202E (RIGHT-TO-LEFT OVERRIDE)`);
    expect(err.hint).toContain("percent-encoded");
    const changelog = path.join(dir, "CHANGELOG-autolink.md");
    await writeFile(changelog, "# Changelog\n\n## [1.2.0] - 2026-11-01\n\n- See <https://example.com/a%e2%81%a7b>\n");
    expect((await refused(() => readChangelogNotes(changelog, "1.2.0"))).message).toContain(`changelog ${changelog}: line 5, column 29: "%e2%81%a7" renders`);
  });

  it("one rule for every section of a changelog: a reference in an older section is refused as a raw control there is", async () => {
    const clean = "# Changelog\n\n## [1.2.0] - 2026-11-01\n\n- Fine\n\n## [1.1.0] - 2026-10-01\n\n";
    const raw = path.join(dir, "CHANGELOG-old-raw.md");
    await writeFile(raw, `${clean}- Old \u202Etext\n`);
    expect((await refused(() => readChangelogNotes(raw, "1.2.0"))).message).toContain(`changelog ${raw}: line 9, column 7: character U+202E`);
    const ref = path.join(dir, "CHANGELOG-old-ref.md");
    await writeFile(ref, `${clean}- Old &#x202E;text\n`);
    const err = await refused(() => readChangelogNotes(ref, "1.2.0"));
    expect(err.code).toBe("E_INPUT");
    expect(err.message).toContain(`changelog ${ref}: line 9, column 7: "&#x202E;" renders as a bidirectional control: character U+202E`);
  });

  it("a reference in a code span is text, not a control: allowed", async () => {
    const file = path.join(dir, "notes-code.md");
    await writeFile(file, "- Escapes `&#x202E;` and `%E2%80%AE` in names\n");
    expect((await readReleaseNotes(file)).markdown).toContain("&#x202E;");
  });

  it("character references of harmless characters stay allowed", async () => {
    const file = path.join(dir, "notes-harmless.md");
    await writeFile(file, "- Fixed &amp; &#x263A; &copy; crash\n");
    expect((await readReleaseNotes(file)).list).toEqual(["Fixed & \u263A \u00A9 crash"]);
  });

  it("right-to-left notes without controls are read as they are", async () => {
    const file = path.join(dir, "notes.he.md");
    await writeFile(file, "- \u05ea\u05d9\u05e7\u05d5\u05df \u05e7\u05e8\u05d9\u05e1\u05d4 \u05d1-1.2.3\n");
    expect((await readReleaseNotes(file)).markdown).toContain("1.2.3");
  });
});
