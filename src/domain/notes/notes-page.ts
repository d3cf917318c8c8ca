import { escapeHtml } from "../../core/html-escape.js";
import type { ReleaseRecord } from "../record-schema.js";
import { localizedNotesPageKey, localizedNotesPageUrl, publicAppcastUrl, releaseNotesPageKey, releaseNotesPageUrl } from "../release-layout.js";
import { renderNotesHtml } from "./markdown.js";
import { recordNotesHtml } from "./notes-html.js";
import { DEFAULT_NOTES_LANGUAGE } from "./notes-language.js";

/** A release-notes page relcast hosts: its key under `{app_url}`, the URL the appcast links, and its exact bytes. */
export interface NotesPage {
  version: string;
  /** The language of a localized page (`--localized-notes`); absent for the default notes. */
  lang?: string;
  key: string;
  url: string;
  bytes: Buffer;
}

// Sparkle shows the page in a small web view next to its own "Version x is available" heading:
// system font, both appearances, no scripts, nothing fetched from elsewhere.
const STYLE = "body{font:13px/1.45 -apple-system,BlinkMacSystemFont,\"Helvetica Neue\",sans-serif;margin:0 12px;color:#1d1d1f;background:#fff}"
  + "h1{font-size:15px}h2,h3,h4,h5,h6{font-size:13px}code{font:12px ui-monospace,Menlo,monospace}a{color:#0b57d0}"
  + "@media (prefers-color-scheme:dark){body{color:#f5f5f7;background:#1e1e1e}a{color:#8ab4f8}}";

/**
 * The page of one release's notes: the Markdown rendered by the same
 * markdown-it dialect as the appcast and the downloads page (raw HTML
 * escaped, only http(s)/mailto links), under the release's heading. Pure:
 * the same record always gives the same bytes, so a signature over them is
 * stable and a dry run shows what a publish writes.
 */
export function renderNotesPage(record: Pick<ReleaseRecord, "displayName" | "version" | "releaseNotesList" | "releaseNotesMarkdown">, localized?: { lang: string; markdown: string }): string {
  const notes = localized ? renderNotesHtml(localized.markdown, { topHeadingLevel: 2 }) : recordNotesHtml(record, { topHeadingLevel: 2 });
  const title = `${record.displayName} ${record.version}`;
  return `<!doctype html>
<html lang="${escapeHtml(localized?.lang ?? DEFAULT_NOTES_LANGUAGE)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Version ${escapeHtml(record.version)}</h1>
${notes}
</body>
</html>
`;
}

/** The site root a record was published under (its public appcast URL names it). */
function appUrlOf(record: ReleaseRecord): string | undefined {
  const suffix = publicAppcastUrl("", record.pluginId);
  return record.publicAppcastUrl.endsWith(suffix) ? record.publicAppcastUrl.slice(0, -suffix.length) : undefined;
}

/** The key of the page relcast hosts for this record, when its release-notes link is relcast's own page. */
export function hostedNotesPageKey(record: ReleaseRecord): string | undefined {
  const link = record.autoupdate?.releaseNotesLink;
  const appUrl = appUrlOf(record);
  return link !== undefined && appUrl !== undefined && link === releaseNotesPageUrl(appUrl, record.version) ? releaseNotesPageKey(record.version) : undefined;
}

/** The localized pages relcast hosts for this record: each `xml:lang` link that is relcast's own page for a language the record has notes in. */
function localizedPages(record: ReleaseRecord): NotesPage[] {
  const appUrl = appUrlOf(record);
  if (appUrl === undefined) return [];
  return (record.autoupdate?.localizedReleaseNotesLinks ?? []).flatMap(({ lang, url }) => {
    const notes = record.localizedReleaseNotes?.find((l) => l.lang === lang);
    if (!notes || url !== localizedNotesPageUrl(appUrl, record.version, lang)) return [];
    return [{ version: record.version, lang, key: localizedNotesPageKey(record.version, lang), url, bytes: Buffer.from(renderNotesPage(record, notes)) }];
  });
}

/** The pages of these records that relcast hosts, in the order given (a record's default page, then its languages). */
export function hostedNotesPages(records: readonly ReleaseRecord[]): NotesPage[] {
  return records.flatMap((r) => {
    const key = hostedNotesPageKey(r);
    const own = key ? [{ version: r.version, key, url: r.autoupdate!.releaseNotesLink!, bytes: Buffer.from(renderNotesPage(r)) }] : [];
    return [...own, ...localizedPages(r)];
  });
}
