import { execFileSync } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../helpers/run-cli.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../../helpers/workspace.js";

const CHANGELOG = `# Changelog

## [Unreleased]

## [1.2.0] - 2026-11-20
### Added
- **Markdown** notes with \`code\`
- Links to [the docs](https://example.com/docs)

### Fixed
- <script>alert("x")</script> no longer breaks the page ]]> really

## [1.1.0] - 2026-10-01
### Fixed
- Old bug
`;

/** A strict independent XML parser reads the appcast and returns the description of the first item. */
const PY_DESCRIPTION = `
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
print(root.find("channel").find("item").find("description").text)
`;

// The two refusals write nothing and run at the same time; the publish runs after them (the first refusal
// checks the store is still empty).
describe.concurrent("publish with Markdown notes and --changelog", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await makeWorkspace();
    await writeFile(path.join(ws.dir, "CHANGELOG.md"), CHANGELOG);
  });
  afterAll(async () => {
    await rm(ws.dir, { recursive: true, force: true });
  });

  it("a version missing from the changelog is an input error naming the versions the file has; nothing is written", async () => {
    const p = await ws.plugin("1.3.0", 130);
    const args = ws.publishArgs(p, "1.3.0").filter((a, i, all) => a !== "--notes" && all[i - 1] !== "--notes");
    const res = await runCli([...args, "--changelog", path.join(ws.dir, "CHANGELOG.md")]);
    expect(res.code, res.stderr).toBe(4);
    expect(res.stderr).toContain("has no section for version 1.3.0; it has sections for 1.2.0, 1.1.0");
    expect(await snapshotTree(ws.storeDir)).toEqual({});
  });

  it("--notes and --changelog together, or neither, are usage errors", async () => {
    const p = await ws.plugin("1.2.0", 120);
    const both = await runCli([...ws.publishArgs(p, "1.2.0"), "--changelog", "CHANGELOG.md"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--notes and --changelog were both given");
    const args = ws.publishArgs(p, "1.2.0").filter((a, i, all) => a !== "--notes" && all[i - 1] !== "--notes");
    const neither = await runCli(args);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain("no release notes given");
  });

  it.sequential("records the section's list items as plain §2.6 notes; the appcast and the downloads page get the rendered HTML", async () => {
    const p = await ws.plugin("1.2.0", 120);
    const args = ws.publishArgs(p, "1.2.0").filter((a, i, all) => a !== "--notes" && all[i - 1] !== "--notes");
    const res = await runCli([...args, "--changelog", path.join(ws.dir, "CHANGELOG.md"), "--json"]);
    expect(res.code, res.stderr).toBe(0);
    const record = JSON.parse(res.stdout) as Record<string, unknown>;
    expect(record.releaseNotesList).toEqual([
      "Markdown notes with code", "Links to the docs", `<script>alert("x")</script> no longer breaks the page ]]> really`,
    ]);
    expect(record.releaseNotes).toBe(`- Markdown notes with code\n- Links to the docs\n- <script>alert("x")</script> no longer breaks the page ]]> really`);
    expect(record.summary).toBe("Markdown notes with code");
    expect(record.releaseNotesMarkdown).toMatch(/^### Added\n- \*\*Markdown\*\*/);

    const description = execFileSync("python3", ["-c", PY_DESCRIPTION, path.join(ws.storeDir, "releases", "appcast.xml")], { encoding: "utf8" });
    expect(description).toContain("<h3>Added</h3>");
    expect(description).toContain("<li><strong>Markdown</strong> notes with <code>code</code></li>");
    expect(description).toContain('<a href="https://example.com/docs">the docs</a>');
    expect(description).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; no longer breaks the page ]]&gt; really");
    expect(description).not.toContain("<script>");

    const page = await readFile(path.join(ws.storeDir, "index.html"), "utf8");
    expect(page).toContain("<h4>Added</h4>");
    expect(page).toContain("<li><strong>Markdown</strong> notes with <code>code</code></li>");
    expect(page).not.toContain("<script>alert");
  });
});
