import { describe, expect, it } from "vitest";
import type { RelcastConfig } from "../../src/config/schema.js";
import { RelcastError } from "../../src/core/errors.js";
import { resolveAutoupdateOptions, type AutoupdateFlags } from "../../src/domain/autoupdate-options.js";
import { canonicalNotesLanguage } from "../../src/domain/notes/notes-language.js";
import { autoupdateSchema } from "../../src/domain/record-schema.js";
import { rolloutBoundIssues } from "../../src/domain/rollout-bounds.js";
import { parseLocalizedNotesArgs } from "../../src/steps/preflight/localized-notes.js";

const config = { appUrl: "https://updates.example.com", appcast: {} } as unknown as RelcastConfig;
const resolve = (flags: AutoupdateFlags, extra: Partial<RelcastConfig> = {}) => resolveAutoupdateOptions({ ...config, ...extra }, flags, "1.1.0", 110, "12.0");

function refusal(run: () => unknown): RelcastError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(RelcastError);
    return err as RelcastError;
  }
  throw new Error("not refused");
}

describe("publish flags for Sparkle's item elements (resolved before anything is read or written)", () => {
  it("keeps builds as Sparkle compares them and the informational set in one order", () => {
    expect(resolve({ minimumUpdateVersion: "0100", minimumAutoupdateVersion: "100", ignoreSkippedUpgradesBelowVersion: "105", informationalUpdateVersions: " 105 ,<100, 101,<90", link: "https://x.example/{version}", maximumSystemVersion: "15.9" })).toEqual({
      minimumAutoupdateVersion: "100", minimumUpdateVersion: "100", ignoreSkippedUpgradesBelowVersion: "105", informationalUpdate: ["101", "105", "<90", "<100"], link: "https://x.example/1.1.0", maximumSystemVersion: "15.9",
    });
    expect(resolve({ informational: true }, { appcast: { link: "https://x.example/r/{version}" } } as Partial<RelcastConfig>)).toEqual({ informationalUpdate: [], link: "https://x.example/r/1.1.0" });
    expect(resolve({ link: "https://flag.example/" }, { appcast: { link: "https://config.example/" } } as Partial<RelcastConfig>).link).toBe("https://flag.example/");
  });

  it.each<[string, AutoupdateFlags, RegExp, RegExp?]>([
    ["informational without a link", { informational: true }, /1\.1\.0 is an informational update but has no link/, /pass --link <url>.*or set appcast\.link in the config/],
    ["a semver in the informational list", { link: "https://x.example/", informationalUpdateVersions: "1.0.0" }, /--informational-update-versions "1\.0\.0" is not a build number/],
    ["a <bound above the build", { link: "https://x.example/", informationalUpdateVersions: "100,<111" }, /--informational-update-versions 111 is above this release's own build 110/],
    ["an empty list (generate_appcast's 'everyone')", { link: "https://x.example/", informationalUpdateVersions: " " }, /is empty/, /--informational/],
    ["an empty entry", { link: "https://x.example/", informationalUpdateVersions: "100,,101" }, /has an empty entry/],
    ["a build named twice", { link: "https://x.example/", informationalUpdateVersions: "<100,<100" }, /names <100 twice/],
    ["--informational with a list", { link: "https://x.example/", informational: true, informationalUpdateVersions: "100" }, /were both given/],
    ["--minimum-update-version with a semver", { minimumUpdateVersion: "1.0" }, /--minimum-update-version "1\.0" is not a build number/],
    ["--minimum-update-version above the build", { minimumUpdateVersion: "111" }, /--minimum-update-version 111 is above this release's own build 110/],
    ["--minimum-update-version equal to the build (nobody could get it)", { minimumUpdateVersion: "110" }, /--minimum-update-version 110 is this release's own build: .*no install would get it/, /pass a build below 110/],
    ["--ignore-skipped-upgrades-below-version above the build", { ignoreSkippedUpgradesBelowVersion: "200", minimumAutoupdateVersion: "100" }, /--ignore-skipped-upgrades-below-version 200 is above/],
    ["--ignore-skipped-upgrades-below-version without a major upgrade", { ignoreSkippedUpgradesBelowVersion: "105" }, /needs --minimum-autoupdate-version: Sparkle reads it only on a major upgrade/, /pass --minimum-autoupdate-version <build>/],
    ["a maximum system version that is not one", { maximumSystemVersion: "fifteen" }, /"fifteen" is not a macOS version/],
    ["a maximum system version below LSMinimumSystemVersion", { maximumSystemVersion: "11.6" }, /11\.6 is below the bundle's LSMinimumSystemVersion 12\.0: no Mac could install/],
    ["a --link that is not http(s)", { link: "ftp://x.example/{version}" }, /--link "ftp:\/\/x\.example\/\{version\}" is not an absolute http\(s\) URL/],
    ["localized notes behind a link relcast does not host", { releaseNotesUrl: "https://n.example/{version}", localizedNotesLanguages: ["de"] }, /cannot be used with the release-notes link https:\/\/n\.example\/1\.1\.0/, /appcast\.releaseNotes to "page"/],
  ])("refuses %s (E_USAGE)", (_name, flags, message, hint) => {
    const err = refusal(() => resolve(flags));
    expect(err.code).toBe("E_USAGE");
    expect(err.message).toMatch(message);
    if (hint) expect(err.hint).toMatch(hint);
  });

  it("links a hosted page per language in page mode; inline notes need no link", () => {
    const page = { ...config, appcast: { releaseNotes: "page" } } as RelcastConfig;
    expect(resolveAutoupdateOptions(page, { localizedNotesLanguages: ["de", "pt-BR"] }, "1.1.0", 110)).toEqual({
      releaseNotesLink: "https://updates.example.com/release-notes/1.1.0.html",
      localizedReleaseNotesLinks: [
        { lang: "de", url: "https://updates.example.com/release-notes/de/1.1.0.html" },
        { lang: "pt-BR", url: "https://updates.example.com/release-notes/pt-BR/1.1.0.html" },
      ],
    });
    expect(resolve({ localizedNotesLanguages: ["de"] })).toEqual({});
  });
});

describe("--localized-notes arguments", () => {
  it("canonicalizes language tags macOS localizations use, sorted by language", () => {
    expect(parseLocalizedNotesArgs(["pt-br=a.md", "DE=b=c.md", "zh-hant=z.md", "es-419=e.md"])).toEqual([
      { lang: "de", file: "b=c.md" }, { lang: "es-419", file: "e.md" }, { lang: "pt-BR", file: "a.md" }, { lang: "zh-Hant", file: "z.md" },
    ]);
    for (const tag of ["de_DE", "en-u-ca-gregory", "x-private", "", "123", "de-DE-1996"]) expect(canonicalNotesLanguage(tag)).toBeUndefined();
  });

  it("refuses ISO 639 special-purpose codes no Mac is set to (und, zxx, mis, mul, qaa–qtz); keeps iw as he and no as no", () => {
    for (const tag of ["und", "zxx", "mis", "mul", "qaa", "qtz", "qab-DE", "UND", "mul-Latn"]) expect(canonicalNotesLanguage(tag), tag).toBeUndefined();
    expect(canonicalNotesLanguage("iw")).toBe("he");
    expect(canonicalNotesLanguage("no")).toBe("no");
    expect(canonicalNotesLanguage("nb")).toBe("nb");
    expect(canonicalNotesLanguage("qua")).toBe("qua"); // Quapaw, a real language just past the private-use range
  });

  it.each<[string[], RegExp]>([
    [["notes.de.md"], /"notes\.de\.md" is not <lang>=<file>/],
    [["de="], /"de=" is not <lang>=<file>/],
    [["de_DE=x.md"], /"de_DE" is not a language tag Sparkle can match/],
    [["EN=x.md"], /--localized-notes EN: the --notes file is already the en notes/],
    [["de=a.md", "DE=b.md"], /names de twice/],
  ])("refuses %j (E_USAGE)", (args, message) => {
    const err = refusal(() => parseLocalizedNotesArgs(args));
    expect(err.code).toBe("E_USAGE");
    expect(err.message).toMatch(message);
  });
});

describe("record schema: what publish refuses, a stored record may not hold either", () => {
  const au = { publicDownloadUrl: "https://u.example/d.zip", buildNumber: 110, edSignature: "x", sizeBytes: 1 };
  const link = (lang: string) => ({ lang, url: `https://u.example/release-notes/${lang}/1.1.0.html` });
  it("localized links: each language once, never en", () => {
    expect(autoupdateSchema.safeParse({ ...au, localizedReleaseNotesLinks: [link("de"), link("fr")] }).success).toBe(true);
    const dup = autoupdateSchema.safeParse({ ...au, localizedReleaseNotesLinks: [link("de"), link("de")] });
    expect(dup.success).toBe(false);
    expect(JSON.stringify(dup.error?.issues)).toContain("names de a second time");
    const en = autoupdateSchema.safeParse({ ...au, localizedReleaseNotesLinks: [link("en")] });
    expect(en.success).toBe(false);
    expect(JSON.stringify(en.error?.issues)).toContain("the default notes are the en ones");
  });

  it("rollout pauses: none before publication, and a pubDate a four-digit year holds", () => {
    const published = Date.parse("2026-10-01T09:00:00Z");
    expect(rolloutBoundIssues(published, { pauses: [{ pausedAt: "2026-10-02T00:00:00.000Z", resumedAt: "2026-10-03T00:00:00.000Z" }] })).toEqual([]);
    expect(rolloutBoundIssues(published, { pauses: [{ pausedAt: "2020-01-01T00:00:00.000Z" }] })[0]!.message).toContain("is before the release was published");
    // Pauses after publication can never add up past their own last resume; the bound backs up records edited by hand.
    const far = rolloutBoundIssues(published, { pauses: [{ pausedAt: "2020-01-01T00:00:00.000Z", resumedAt: "9999-06-01T00:00:00.000Z" }] }).map((i) => i.message).join("\n");
    expect(far).toContain("is before the release was published");
    expect(far).toContain("add up to a pubDate after the year 9999");
  });
});
