import path from "node:path";
import { namePathProblem } from "../core/entry-name-rule.js";
import { MacOSNames } from "../core/macos-name.js";
import { linkTargetProblem, type TreeKind } from "../core/link-target-rule.js";
import type { ZipEntryInfo } from "./zip-listing.js";

/**
 * What an update zip must look like for Sparkle to install it and for the
 * bundle's code signature to survive: one top-level bundle with
 * Contents/Info.plist, no Finder/AppleDouble debris (`__MACOSX/`, `._*`),
 * symlinks stored as symlinks that stay inside the bundle (codesign refuses
 * links that leave it), and framework layouts whose `Versions/Current` and
 * top-level aliases are links, not copies (a flattened framework breaks the
 * signature), and no two entries that are one name on macOS (case, NFC/NFD). Returns one sentence per problem; empty when the zip is fine.
 */
export function zipRuleProblems(entries: readonly ZipEntryInfo[]): string[] {
  const problems: string[] = [];
  if (entries.length === 0) return ["the zip is empty"];
  const tops = [...new Set(entries.map((e) => e.name.split("/")[0]!))];
  if (tops.length !== 1) problems.push(`the zip must hold exactly one top-level bundle, found ${tops.length}: ${tops.slice(0, 5).join(", ")}`);
  const top = tops[0]!;
  const byName = new Map(entries.map((e) => [e.name.replace(/\/$/, ""), e]));
  if (byName.get(top)?.kind === "file" || byName.get(top)?.kind === "symlink") problems.push(`the top-level entry ${top} is not a folder`);
  if (tops.length === 1 && byName.get(`${top}/Contents/Info.plist`)?.kind !== "file") problems.push(`${top} has no Contents/Info.plist file`);
  const seen = new MacOSNames();
  for (const e of entries) {
    const parts = e.name.replace(/\/$/, "").split("/");
    // Two entries that unpack to one file or folder on a Mac (case, NFC/NFD, or the same name twice): only one survives.
    const twin = seen.twinOf(parts.join("/"));
    if (twin !== undefined) problems.push(twin === parts.join("/") ? `the zip holds ${e.name} twice` : `entries ${JSON.stringify(twin)} and ${JSON.stringify(e.name)} are one name on macOS (it ignores case and Unicode normalization): unpacking keeps only one; rename or remove one in the bundle`);
    // The one name rule (core/entry-name-rule.ts, core/utf8-bytes.ts), as preflight and relcast's zip readers apply it.
    const badName = e.nameNotUtf8 ? "is not valid UTF-8" : e.name.startsWith("/") ? "is absolute" : namePathProblem(parts);
    if (badName) {
      problems.push(`entry name ${JSON.stringify(e.name)} ${badName}: rename it in the bundle`);
      continue;
    }
    if (parts.includes("__MACOSX")) problems.push(`Finder debris in the zip: ${e.name} (__MACOSX)`);
    else if (parts.some((p) => p.startsWith("._"))) problems.push(`AppleDouble file in the zip: ${e.name}`);
    if (e.kind === "symlink") problems.push(...symlinkProblems(e, top, (treeRel) => byName.get(`${top}${treeRel}`)?.kind));
  }
  problems.push(...frameworkProblems(entries, byName));
  return problems;
}

/**
 * The link rule of preflight, the delta tools and the readers (core/link-target-rule.ts: bytes, length, absolute,
 * outside as written, a trailing "/" naming a folder among the zip's entries), so a link changed between preflight
 * and the zip is caught here, and `verify` reports one in a stored zip.
 */
function symlinkProblems(e: ZipEntryInfo, top: string, kindAt: (treeRel: string) => TreeKind | undefined): string[] {
  const target = e.target ?? "";
  if (target === "") return [`symlink ${e.name} has no target`];
  if (target.startsWith("/")) return [`symlink ${e.name} points to the absolute path ${target}; codesign and Sparkle need links inside the bundle`];
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(e.name), target));
  if (resolved !== top && !resolved.startsWith(`${top}/`)) return [`symlink ${e.name} -> ${target} points outside ${top}`];
  const rel = e.name.slice(top.length);
  const problem = linkTargetProblem(rel, e.targetBytes ?? target, kindAt);
  return problem ? [`in ${top}: ${problem}`] : [];
}

/** `X.framework/Versions/Current` and the framework's top-level aliases must be symlinks. */
function frameworkProblems(entries: readonly ZipEntryInfo[], byName: Map<string, ZipEntryInfo>): string[] {
  const problems: string[] = [];
  const frameworks = new Set<string>();
  for (const e of entries) {
    const m = /^(.*\.framework)\/Versions\//.exec(e.name);
    if (m) frameworks.add(m[1]!);
  }
  for (const fw of frameworks) {
    const current = byName.get(`${fw}/Versions/Current`);
    if (current && current.kind !== "symlink") problems.push(`${fw}/Versions/Current is a ${current.kind}, not a symlink (the zip flattened a link)`);
    for (const e of entries) {
      const rest = e.name.replace(/\/$/, "").slice(fw.length + 1);
      if (!e.name.startsWith(`${fw}/`) || rest === "" || rest.includes("/") || rest === "Versions") continue;
      if (e.kind !== "symlink") problems.push(`${e.name} is a ${e.kind} at the top of a versioned framework; it must be a symlink into Versions/Current`);
    }
  }
  return problems;
}
