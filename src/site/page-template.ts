import { readFileSync } from "node:fs";
import path from "node:path";
import { packageRoot } from "../core/package-root.js";
import { escapeHtml } from "../core/html-escape.js";

const cache = new Map<string, string>();

/** A file shipped with relcast (`templates/…`), read once. */
export function packageFile(relative: string): string {
  let text = cache.get(relative);
  if (text === undefined) {
    text = readFileSync(path.join(packageRoot(), relative), "utf8");
    cache.set(relative, text);
  }
  return text;
}


/**
 * Fills `{{name}}` with escaped text and `{{{name}}}` with HTML the caller
 * built (and escaped) itself. A placeholder without a value is a bug, not
 * an empty string.
 */
export function fillTemplate(template: string, text: Record<string, string>, html: Record<string, string>): string {
  return template.replace(/\{\{\{(\w+)\}\}\}|\{\{(\w+)\}\}/g, (_m, raw: string | undefined, plain: string | undefined) => {
    const value = raw !== undefined ? html[raw] : text[plain!];
    if (value === undefined) throw new Error(`pipeline bug: template placeholder ${raw ?? plain} has no value`);
    return raw !== undefined ? value : escapeHtml(value);
  });
}
