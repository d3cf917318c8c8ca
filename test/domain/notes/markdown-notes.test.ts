import { describe, expect, it } from "vitest";
import { parseReleaseNotes } from "../../../src/domain/release-notes.js";
import { changelogSection } from "../../../src/domain/notes/keep-a-changelog.js";
import { renderNotesHtml } from "../../../src/domain/notes/markdown.js";
import { runPython } from "../../hmac/run-python.js";

const KEEP_A_CHANGELOG = `# Changelog
All notable changes to this project will be documented in this file.

The format is based on [Keep a Changelog](https://keepachangelog.com/en/1.1.0/).

## [Unreleased]
### Added
- Not released yet

## [1.2.0] - 2026-11-20
### Added
- **Bold** support for \`code\` in [links](https://example.com/docs)
- Nested lists:
  - first child
  - second child

### Fixed
- Crash when the window closes
  while saving

## [1.1.0] - 2026-10-01
### Removed
- Old importer

## 1.0.0 - 2026-09-01
- First release

[unreleased]: https://github.com/example/plugin/compare/v1.2.0...HEAD
[1.2.0]: https://github.com/example/plugin/compare/v1.1.0...v1.2.0
[1.0.0]: https://github.com/example/plugin/releases/tag/v1.0.0
`;

describe("Markdown release notes → the record's §2.6 form", () => {
  it("takes list items as plain strings: markup removed, nested items flattened, headings and paragraphs not items", () => {
    const notes = parseReleaseNotes("## What's new\n\nThis release is **faster**.\n\n- **Bold** and `code` and [a link](https://x.example)\n  - child item\n- second\n\n1. numbered\n");
    expect(notes.list).toEqual(["Bold and code and a link", "child item", "second", "numbered"]);
    expect(notes.text).toBe("- Bold and code and a link\n- child item\n- second\n- numbered");
    expect(notes.firstText).toBe("Bold and code and a link");
    expect(parseReleaseNotes("## Heading only\n").firstText).toBe("Heading only");
    expect(parseReleaseNotes("## Heading\n\nParagraph.\n").firstText).toBe("Paragraph.");
  });

  it("paragraph-only notes have no list items but a first text for the summary", () => {
    const notes = parseReleaseNotes("Faster start.\nFewer crashes.\n");
    expect(notes.list).toEqual([]);
    expect(notes.text).toBe("");
    expect(notes.firstText).toBe("Faster start. Fewer crashes.");
  });

  it("keeps raw HTML as text in the list and escapes it in the HTML", () => {
    const notes = parseReleaseNotes("- <script>alert(1)</script> & <b>bold</b>\n");
    expect(notes.list).toEqual(["<script>alert(1)</script> & <b>bold</b>"]);
    const html = renderNotesHtml(notes.markdown);
    expect(html).toBe("<ul>\n<li>&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;</li>\n</ul>\n");
  });

  it("renders links and images only to http(s) and mailto", () => {
    const html = renderNotesHtml("[ok](https://x.example/a?b=1&c=2) [mail](mailto:a@b.example) [js](javascript:alert(1)) [data](data:text/html,x) [file](file:///etc/passwd) [rel](notes.html) ![img](data:image/png;base64,AAAA)");
    expect(html).toContain('<a href="https://x.example/a?b=1&amp;c=2">ok</a>');
    expect(html).toContain('<a href="mailto:a@b.example">mail</a>');
    for (const bad of ["javascript:", "data:", "file:", "notes.html"]) expect(html).not.toMatch(new RegExp(`(href|src)="${bad}`));
  });

  it("shifts headings under a page's heading level", () => {
    expect(renderNotesHtml("# Big\n## Small\n", { topHeadingLevel: 4 })).toBe("<h4>Big</h4>\n<h5>Small</h5>\n");
    expect(renderNotesHtml("### Fixed\n", { topHeadingLevel: 4 })).toBe("<h4>Fixed</h4>\n");
  });

  it("rendered HTML is well-formed XHTML-compatible markup for a strict independent parser (Python xml.etree)", async () => {
    const html = renderNotesHtml(KEEP_A_CHANGELOG);
    const out = runPython<[number, number, string[]]>(
      "import sys, json, xml.etree.ElementTree as ET\nroot = ET.fromstring('<div>' + json.load(sys.stdin) + '</div>')\nprint(json.dumps([len(root.findall('.//li')), len(root.findall('.//h3')), sorted(a.get('href') for a in root.iter('a'))]))",
      html,
    );
    // 8 items, 4 "###" headings; "## [1.2.0]" headings are links through the file's reference definitions.
    expect(out).toEqual([8, 4, [
      "https://github.com/example/plugin/compare/v1.2.0...HEAD", "https://github.com/example/plugin/compare/v1.1.0...v1.2.0",
      "https://example.com/docs", "https://keepachangelog.com/en/1.1.0/",
    ].sort()]);
  });
});

describe("Keep a Changelog sections", () => {
  it("takes the version's section, up to the next version heading", () => {
    const section = changelogSection(KEEP_A_CHANGELOG, "1.2.0", "CHANGELOG.md");
    expect(section.heading).toBe("[1.2.0] - 2026-11-20");
    const notes = parseReleaseNotes(section.markdown);
    expect(notes.list).toEqual(["Bold support for code in links", "Nested lists:", "first child", "second child", "Crash when the window closes while saving"]);
    expect(section.markdown.startsWith("### Added\n")).toBe(true);
    expect(section.markdown).not.toContain("1.1.0");
  });

  it("the last section stops before the file's link reference definitions; headings without brackets work", () => {
    const section = changelogSection(KEEP_A_CHANGELOG, "1.0.0", "CHANGELOG.md");
    expect(section.markdown).toBe("- First release\n");
  });

  it("a missing version is an input error naming the versions the file has", () => {
    expect(() => changelogSection(KEEP_A_CHANGELOG, "1.3.0", "CHANGELOG.md")).toThrow(
      expect.objectContaining({ code: "E_INPUT", message: "CHANGELOG.md has no section for version 1.3.0; it has sections for 1.2.0, 1.1.0, 1.0.0" }),
    );
    expect(() => changelogSection("# Changelog\n\nNothing yet.\n", "1.0.0", "CHANGELOG.md")).toThrow(/no version sections/);
  });

  it("does not take a version heading inside a code block", () => {
    const text = "## [2.0.0] - 2026-12-01\n- real\n\n```\n## [1.9.0] - 2026-01-01\n```\n";
    expect(() => changelogSection(text, "1.9.0", "C.md")).toThrow(/it has sections for 2\.0\.0$/);
  });
});
