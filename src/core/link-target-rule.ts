/**
 * The one rule for a link a delta creates: its target is not empty, holds no
 * NUL, is not absolute, and does not climb above the bundle's root from the
 * link's folder (Sparkle 2.9.2 refuses the same; GHSA-hg88-v3cw-3qrh). The
 * applier refuses such a delta as corrupt, so the creator refuses to make one,
 * and preflight refuses such a link in the bundle (a target like `x/../../..`
 * can stay inside when the kernel follows `x`, and still climb out as text).
 */
import path from "node:path";

/** Why the link at `rel` ("/Contents/x") with `target` breaks the rule; undefined when it keeps it. */
export function linkTargetProblem(rel: string, target: string): string | undefined {
  if (target === "" || target.includes("\0")) return `link ${rel} has an empty or NUL-holding target`;
  if (target.startsWith("/")) return `link ${rel} points at the absolute path ${JSON.stringify(target.slice(0, 200))}, outside the bundle`;
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(rel.slice(1)), target));
  if (resolved === ".." || resolved.startsWith("../")) return `link ${rel} points at ${JSON.stringify(target.slice(0, 200))}, outside the bundle when read as written (each ".." from the link's own folder, as Sparkle reads it)`;
  return undefined;
}
