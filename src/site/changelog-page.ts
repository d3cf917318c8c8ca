import { z } from "zod";
import type { RelcastConfig } from "../config/schema.js";
import { escapeHtml } from "../core/html-escape.js";
import { fillTemplate, packageFile } from "./page-template.js";

const changelogSchema = z.strictObject({
  title: z.string(),
  source: z.string(),
  entries: z.array(z.strictObject({ date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/), change: z.string().min(1) })),
});

export type Changelog = z.infer<typeof changelogSchema>;

/** The product API changelog of spec §9, shipped as data/changelog.json. */
export function loadChangelog(): Changelog {
  return changelogSchema.parse(JSON.parse(packageFile("data/changelog.json")));
}

/** Newest first whatever order the data file lists (ISO dates sort as text). */
export function renderChangelogPage(config: Pick<RelcastConfig, "displayName">, changelog: Changelog = loadChangelog()): string {
  const rows = [...changelog.entries]
    .sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : 0))
    .map((e) => `<tr><th scope="row"><time datetime="${e.date}">${e.date}</time></th><td>${escapeHtml(e.change)}</td></tr>`)
    .join("\n");
  return fillTemplate(
    packageFile("templates/changelog.html"),
    { title: changelog.title, source: changelog.source, displayName: config.displayName },
    { css: packageFile("templates/site.css"), rows },
  );
}
