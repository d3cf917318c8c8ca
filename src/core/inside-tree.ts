import { lstat, readdir, readlink } from "node:fs/promises";
import path from "node:path";
import { linkTargetBytesProblem, shownTarget } from "./utf8-bytes.js";

/** Like the kernel's MAXSYMLINKS: more links than this on one path is a loop. */
const MAX_LINK_HOPS = 40;
/** Stands for a target's trailing "/" among the parts still to walk (no file name can be empty). */
const TRAILING_SLASH = "";

/**
 * A name in the same folder that is the missing one in another Unicode form
 * or case (a target typed as NFD "cafe\u0301" for a file named NFC "café"):
 * the kernel compares bytes here, so the link goes nowhere, and the message
 * says which name it almost reached. "" when there is none.
 */
async function nearName(root: string, done: readonly string[]): Promise<string> {
  const key = (name: string): string => name.normalize("NFD").toLowerCase();
  const wanted = key(done[done.length - 1]!);
  const names = await readdir(path.join(root, ...done.slice(0, -1))).catch(() => [] as string[]);
  const near = names.find((name) => key(name) === wanted);
  return near === undefined ? "" : ` (its folder holds ${JSON.stringify(near)}, the same name in another Unicode normalization or case: make the link's target the same bytes as the name)`;
}

/**
 * Where a symlink inside the bundle ends up, resolved as the kernel would:
 * component by component, following every link on the way (chains, links to
 * folders, `..` after a link). Returns the path relative to the bundle, or
 * a sentence saying why it leaves the bundle or goes nowhere. Targets are
 * read as bytes: one that is not UTF-8 (or empty, or holding a NUL) goes
 * nowhere a zip or Sparkle could keep. A target ending in "/" must reach a
 * folder, as the kernel requires (ENOTDIR otherwise).
 */
export async function resolveInsideBundle(root: string, linkRel: string): Promise<{ inside: true; resolved: string } | { inside: false; why: string }> {
  const done: string[] = [];
  const todo = linkRel.split("/").filter((p) => p !== "");
  let hops = 0;
  while (todo.length > 0) {
    const part = todo.shift()!;
    if (part === "." || part === TRAILING_SLASH) continue;
    if (part === "..") {
      if (done.length === 0) return { inside: false, why: "climbs above the bundle" };
      done.pop();
      continue;
    }
    done.push(part);
    const abs = path.join(root, ...done);
    const st = await lstat(abs).catch(() => undefined);
    if (!st) return { inside: false, why: `goes to ${done.join("/")}, which does not exist in the bundle${await nearName(root, done)}` };
    if (st.isSymbolicLink()) {
      if (++hops > MAX_LINK_HOPS) return { inside: false, why: "is a loop of links" };
      const bytes = await readlink(abs, { encoding: "buffer" });
      const byBytes = linkTargetBytesProblem(bytes);
      if (byBytes) return { inside: false, why: `reaches ${done.join("/")} -> ${shownTarget(bytes)}, which ${byBytes}` };
      const target = bytes.toString("utf8");
      if (target.startsWith("/")) return { inside: false, why: `reaches ${done.join("/")} -> ${target}, an absolute path outside the bundle` };
      done.pop();
      const parts = target.split("/").filter((p) => p !== "");
      // A trailing "/" asks for a folder: kept as an empty last part, so what it reaches is checked to be one.
      todo.unshift(...parts, ...(target.endsWith("/") ? [TRAILING_SLASH] : []));
    } else if (todo.length > 0 && !st.isDirectory()) {
      if (todo[0] === TRAILING_SLASH && todo.length === 1) return { inside: false, why: `ends in "/" but reaches ${done.join("/")}, which is not a folder (a broken link: the kernel answers ENOTDIR)` };
      return { inside: false, why: `goes through ${done.join("/")}, which is not a folder` };
    }
  }
  return { inside: true, resolved: done.join("/") };
}

/**
 * The first symlink under `root` (a bundle or a tree a delta wrote) that
 * ends up outside it, resolved as the kernel would (through every link on
 * the way), with the reason; undefined when every link stays inside.
 */
export async function linkLeavingTree(root: string, rel = ""): Promise<{ rel: string; why: string } | undefined> {
  for (const entry of await readdir(path.join(root, rel), { withFileTypes: true })) {
    const childRel = rel === "" ? entry.name : `${rel}/${entry.name}`;
    if (entry.isSymbolicLink()) {
      const where = await resolveInsideBundle(root, childRel);
      if (!where.inside) return { rel: childRel, why: where.why };
    } else if (entry.isDirectory()) {
      const found = await linkLeavingTree(root, childRel);
      if (found) return found;
    }
  }
  return undefined;
}
