import { lstat, readdir, readlink } from "node:fs/promises";
import path from "node:path";

/** Like the kernel's MAXSYMLINKS: more links than this on one path is a loop. */
const MAX_LINK_HOPS = 40;

/**
 * Where a symlink inside the bundle ends up, resolved as the kernel would:
 * component by component, following every link on the way (chains, links to
 * folders, `..` after a link). Returns the path relative to the bundle, or
 * a sentence saying why it leaves the bundle or goes nowhere.
 */
export async function resolveInsideBundle(root: string, linkRel: string): Promise<{ inside: true; resolved: string } | { inside: false; why: string }> {
  const done: string[] = [];
  const todo = linkRel.split("/").filter((p) => p !== "");
  let hops = 0;
  while (todo.length > 0) {
    const part = todo.shift()!;
    if (part === ".") continue;
    if (part === "..") {
      if (done.length === 0) return { inside: false, why: "climbs above the bundle" };
      done.pop();
      continue;
    }
    done.push(part);
    const abs = path.join(root, ...done);
    const st = await lstat(abs).catch(() => undefined);
    if (!st) return { inside: false, why: `goes to ${done.join("/")}, which does not exist in the bundle` };
    if (st.isSymbolicLink()) {
      if (++hops > MAX_LINK_HOPS) return { inside: false, why: "is a loop of links" };
      const target = await readlink(abs);
      if (target.startsWith("/")) return { inside: false, why: `reaches ${done.join("/")} -> ${target}, an absolute path outside the bundle` };
      done.pop();
      todo.unshift(...target.split("/").filter((p) => p !== ""));
    } else if (todo.length > 0 && !st.isDirectory()) {
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
