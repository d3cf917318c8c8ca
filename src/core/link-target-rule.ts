/**
 * The one rule for a link a delta creates: its target is not empty, holds no
 * NUL, is valid UTF-8, is not absolute, and does not climb above the bundle's
 * root from the link's folder (Sparkle 2.9.2 refuses the same;
 * GHSA-hg88-v3cw-3qrh). The applier refuses such a delta as corrupt, so the
 * creator refuses to make one, and preflight refuses such a link in the
 * bundle (a target like `x/../../..` can stay inside when the kernel follows
 * `x`, and still climb out as text). A target ending in "/" must name a
 * folder as written: `Info.plist/` is a broken link to the kernel (ENOTDIR);
 * `a/../X/` where X is a file may still reach a folder through the link `a`,
 * but read as text (as the zip rules, the delta tools and `verify` read it,
 * each ".." from the link's own folder) it names a file, so it is refused
 * everywhere by this one rule rather than accepted by some readers.
 */
import path from "node:path";
import { linkTargetBytesProblem } from "./utf8-bytes.js";

export type TreeKind = "dir" | "file" | "symlink";

/**
 * Why the link at `rel` ("/Contents/x") with `target` breaks the rule; undefined when it keeps it.
 * `kindAt` (a tree path such as "/Contents/Info.plist" to what the tree holds there) lets a target ending in "/"
 * be checked against what it names as written.
 */
export function linkTargetProblem(rel: string, target: string | Buffer, kindAt?: (treeRel: string) => TreeKind | undefined): string | undefined {
  const bytes = typeof target === "string" ? Buffer.from(target, "utf8") : target;
  const byBytes = linkTargetBytesProblem(bytes);
  if (byBytes) return `link ${rel} ${byBytes}`;
  const text = bytes.toString("utf8");
  const shown = JSON.stringify(text.slice(0, 200));
  if (text.startsWith("/")) return `link ${rel} points at the absolute path ${shown}, outside the bundle`;
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(rel.slice(1)), text));
  if (resolved === ".." || resolved.startsWith("../")) return `link ${rel} points at ${shown}, outside the bundle when read as written (each ".." from the link's own folder, as Sparkle reads it)`;
  if (kindAt && text.endsWith("/")) {
    const named = `/${resolved.replace(/\/$/, "")}`;
    if (named !== "/." && kindAt(named) === "file") return `link ${rel} points at ${shown}, which ends in "/" (a folder) but, read as text, names the file ${named}`;
  }
  return undefined;
}
