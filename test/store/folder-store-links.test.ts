import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFolderStore } from "../../src/store/folder-store.js";
import type { ObjectStore } from "../../src/store/object-store.js";

/** Copies inside a folder store are hard links: the same bytes once on disk, yet every name still changes alone. */
describe("folder store copies as hard links", () => {
  let dir: string;
  let store: ObjectStore;
  const opts = { contentType: "application/octet-stream", cacheControl: "no-cache" };
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "relcast-links-"));
    store = createFolderStore(path.join(dir, "store"));
  });
  afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

  it("copy shares the inode, and replacing or deleting the source leaves the copy's bytes as they were", async () => {
    await store.put("releases/1.0.0/a.zip", Buffer.from("version one"), { ...opts, ifNoneMatch: "*" });
    await store.copy("releases/1.0.0/a.zip", "releases/latest/a.zip", opts);
    await store.copy("releases/1.0.0/a.zip", "downloads/a.zip", { ...opts, ifNoneMatch: "*" });
    const file = (key: string) => path.join(dir, "store", ...key.split("/"));
    const [src, latest, download] = await Promise.all(["releases/1.0.0/a.zip", "releases/latest/a.zip", "downloads/a.zip"].map((k) => stat(file(k))));
    expect(latest!.ino).toBe(src!.ino);
    expect(download!.ino).toBe(src!.ino);
    // A later publish replaces latest (temp file + rename): the versioned object keeps its bytes.
    await store.put("releases/latest/a.zip", Buffer.from("version two"), opts);
    expect((await store.get("releases/1.0.0/a.zip"))!.body.toString()).toBe("version one");
    expect((await store.get("downloads/a.zip"))!.body.toString()).toBe("version one");
    await store.delete("releases/1.0.0/a.zip");
    expect((await store.get("downloads/a.zip"))!.body.toString()).toBe("version one");
    expect((await store.get("releases/latest/a.zip"))!.body.toString()).toBe("version two");
  });

  it("copying over a name that already links the same inode leaves no temp file behind", async () => {
    await store.put("releases/3.0.0/b.zip", Buffer.from("three"), { ...opts, ifNoneMatch: "*" });
    await store.copy("releases/3.0.0/b.zip", "releases/latest/b.zip", opts);
    await store.copy("releases/3.0.0/b.zip", "releases/latest/b.zip", opts);
    const names = await readdir(path.join(dir, "store", "releases", "latest"));
    expect(names.filter((n) => n.startsWith(".relcast-"))).toEqual([]);
    expect((await store.get("releases/latest/b.zip"))!.body.toString()).toBe("three");
  });

  it("keeps a handed-over file without copying it, but copies a file that is not handed over", async () => {
    const work = path.join(dir, "work");
    await rm(work, { recursive: true, force: true });
    await mkdir(work);
    await writeFile(path.join(work, "ours.zip"), "zip bytes");
    await writeFile(path.join(work, "user.dmg"), "dmg bytes");
    await store.put("releases/2.0.0/ours.zip", { file: path.join(work, "ours.zip"), handOver: true }, { ...opts, ifNoneMatch: "*" });
    await store.put("releases/2.0.0/user.dmg", { file: path.join(work, "user.dmg") }, { ...opts, ifNoneMatch: "*" });
    const file = (key: string) => path.join(dir, "store", ...key.split("/"));
    expect((await stat(file("releases/2.0.0/ours.zip"))).ino).toBe((await stat(path.join(work, "ours.zip"))).ino);
    expect((await stat(file("releases/2.0.0/user.dmg"))).ino).not.toBe((await stat(path.join(work, "user.dmg"))).ino);
    // The user's file changed in place later: the published object does not change with it.
    await writeFile(path.join(work, "user.dmg"), "changed!!");
    expect(await readFile(file("releases/2.0.0/user.dmg"), "utf8")).toBe("dmg bytes");
  });

  it("refuses to copy a symlink planted in the store, and writes nothing", async () => {
    await writeFile(path.join(dir, "outside.txt"), "secret");
    await symlink(path.join(dir, "outside.txt"), path.join(dir, "store", "releases", "planted.zip"));
    await expect(store.copy("releases/planted.zip", "downloads/planted.zip", opts)).rejects.toThrow();
    expect(await store.head("downloads/planted.zip")).toBeUndefined();
  });
});

/** A FIFO planted in a folder store is not an object: reading it answers "not found" at once instead of waiting for a writer. */
describe("folder store: a FIFO in an object's place", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "relcast-fifo-"));
  });
  afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

  it("get, getStream and head answer undefined (no hang), and the FIFO is left as it was", async () => {
    const store = createFolderStore(path.join(dir, "store"));
    await mkdir(path.join(dir, "store", "releases", "1.0.0"), { recursive: true });
    const fifo = path.join(dir, "store", "releases", "1.0.0", "release.json");
    execFileSync("mkfifo", [fifo]);
    expect(await store.get("releases/1.0.0/release.json")).toBeUndefined();
    expect(await store.head("releases/1.0.0/release.json")).toBeUndefined();
    expect((await stat(fifo)).isFIFO()).toBe(true);
  });
});

/** Special files in a folder store are named for what they are, with the fix, not as links. */
describe("folder store: devices, pipes and sockets are named for what they are", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "relcast-special-"));
  });
  afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

  /** mknod needs root (CAP_MKNOD): elsewhere the devices are left out and the FIFO still checks the wording. */
  function mknod(file: string, type: "c" | "b"): boolean {
    try {
      execFileSync("mknod", [file, type, "1", "3"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  }

  it("strayEntries names a character device, a block device and a FIFO, each with the rm that removes it", async () => {
    const root = path.join(dir, "store");
    const store = createFolderStore(root);
    await mkdir(path.join(root, "releases", "1.0.0"), { recursive: true });
    execFileSync("mkfifo", [path.join(root, "releases", "1.0.0", "pipe.zip")]);
    const chr = mknod(path.join(root, "releases", "1.0.0", "null.dmg"), "c");
    const blk = mknod(path.join(root, "releases", "disk.dmg"), "b");
    const found = await store.strayEntries!();
    expect(found).toContain(`releases/1.0.0/pipe.zip is a named pipe (FIFO), not a regular file: a store holds only files and folders, and the folder store never opens one, so readers see no object there: remove it (rm ${path.join(root, "releases", "1.0.0", "pipe.zip")})`);
    if (chr) expect(found.find((f) => f.startsWith("releases/1.0.0/null.dmg "))).toMatch(/^releases\/1\.0\.0\/null\.dmg is a character device, not a regular file: .*remove it \(rm /);
    if (blk) expect(found.find((f) => f.startsWith("releases/disk.dmg "))).toMatch(/^releases\/disk\.dmg is a block device, not a regular file/);
    expect(found.join("\n")).not.toMatch(/link/);
  });
});
