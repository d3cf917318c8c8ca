import { escapeHtml } from "../core/html-escape.js";
import type { ReleaseRecord } from "../domain/record-schema.js";
import { iconKey } from "../domain/release-layout.js";

/** What every page is rendered from besides the records: the config's names and public address. */
export interface PageIdentity {
  pluginId: string;
  displayName: string;
  publisher: string;
  /** `{app_url}` without a trailing slash: the site's root, for canonical and Open Graph URLs. */
  appUrl: string;
}

/** Used when no release has an icon: a small download arrow, inline (the page loads nothing else). */
const FALLBACK_FAVICON = "data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 viewBox=%220 0 16 16%22%3E%3Crect width=%2216%22 height=%2216%22 rx=%223%22 fill=%22%230b57d0%22/%3E%3Cpath d=%22M8 3v7m-3-3 3 3 3-3M4 13h8%22 stroke=%22white%22 stroke-width=%221.6%22 fill=%22none%22/%3E%3C/svg%3E";

/** A description for search results and link previews: at most 200 characters, cut at a word. */
export function shortDescription(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= 200) return flat;
  const cut = flat.slice(0, 199);
  return `${cut.slice(0, cut.lastIndexOf(" ") > 120 ? cut.lastIndexOf(" ") : 199)}…`;
}

/** The page's icon: the product's (its public copy under `icons/`), or none. */
export function iconOf(r: ReleaseRecord | undefined): { href: string; width: number; height: number } | undefined {
  return r?.icon ? { href: iconKey(r.icon.fileName), width: r.icon.width, height: r.icon.height } : undefined;
}

/**
 * The head's description, canonical URL, Open Graph and favicon tags.
 * Open Graph needs absolute URLs, so they are built from `{app_url}`; the
 * page's own links stay relative (it works under any host and `relcast serve`).
 */
export function headTags(identity: PageIdentity, page: { path: string; title: string; description: string; icon: ReturnType<typeof iconOf> }): string {
  const url = `${identity.appUrl}/${page.path}`;
  const tags = [
    `<meta name="description" content="${escapeHtml(page.description)}">`,
    `<link rel="canonical" href="${escapeHtml(url)}">`,
    `<meta property="og:type" content="website">`,
    `<meta property="og:site_name" content="${escapeHtml(identity.displayName)}">`,
    `<meta property="og:title" content="${escapeHtml(page.title)}">`,
    `<meta property="og:description" content="${escapeHtml(page.description)}">`,
    `<meta property="og:url" content="${escapeHtml(url)}">`,
  ];
  if (page.icon) {
    tags.push(
      `<meta property="og:image" content="${escapeHtml(`${identity.appUrl}/${page.icon.href}`)}">`,
      `<meta property="og:image:type" content="image/png">`,
      `<meta property="og:image:width" content="${page.icon.width}">`,
      `<meta property="og:image:height" content="${page.icon.height}">`,
      `<meta property="og:image:alt" content="${escapeHtml(`${identity.displayName} icon`)}">`,
      `<link rel="icon" type="image/png" href="${escapeHtml(page.icon.href)}">`,
      `<link rel="apple-touch-icon" href="${escapeHtml(page.icon.href)}">`,
    );
  } else tags.push(`<link rel="icon" href="${FALLBACK_FAVICON}">`);
  tags.push(`<meta name="twitter:card" content="summary">`);
  return tags.join("\n");
}

/** The product's icon beside its name in the page header (decorative: the name follows it). */
export function iconImage(icon: ReturnType<typeof iconOf>): string {
  return icon ? `<img class="app-icon" src="${escapeHtml(icon.href)}" width="96" height="96" alt="">` : "";
}
