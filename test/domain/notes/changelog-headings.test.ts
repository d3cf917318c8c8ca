import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { changelogSection } from "../../../src/domain/notes/keep-a-changelog.js";
import { readReleaseNotes } from "../../../src/steps/preflight/notes-file.js";

/** Changelog headings as generators write them, and a whole changelog passed as --notes. */
describe("changelog headings", () => {
  let dir: string | undefined;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("--changelog finds `## v1.3.0 (2026-11-27)` and `## 1.2.0 (2026-10-01)` sections", () => {
    const text = "# Changelog\n\n## v1.3.0 (2026-11-27)\n\n- New export\n\n## 1.2.0 (2026-10-01)\n\n- Old fix\n";
    expect(changelogSection(text, "1.3.0", "CHANGELOG.md").markdown).toContain("New export");
    expect(changelogSection(text, "1.2.0", "CHANGELOG.md").markdown).toContain("Old fix");
    expect(changelogSection(text, "1.2.0", "CHANGELOG.md").markdown).not.toContain("New export");
  });

  it("--notes refuses a changelog with [Unreleased] and one version, or with dated v-headings", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "changelog-"));
    const files = {
      "unreleased.md": "# Changelog\n\n## [Unreleased]\n\n- Upcoming\n\n## [1.2.0] - 2026-11-20\n\n- Shipped\n",
      "dated.md": "## v1.3.0 (2026-11-27)\n\n- New\n\n## v1.2.0 (2026-10-01)\n\n- Old\n",
    };
    for (const [name, text] of Object.entries(files)) {
      await writeFile(path.join(dir, name), text);
      await expect(readReleaseNotes(path.join(dir, name)), name).rejects.toThrow(/is a whole changelog/);
    }
    // One release's notes with one heading stay notes.
    await writeFile(path.join(dir, "one.md"), "## What's new in 1.3.0\n\n- New export\n");
    await expect(readReleaseNotes(path.join(dir, "one.md"))).resolves.toBeDefined();
  });
});
