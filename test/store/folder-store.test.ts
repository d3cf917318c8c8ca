import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import { createFolderStore } from "../../src/store/folder-store.js";
import { runStoreContract } from "./store-contract.js";

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

runStoreContract(
  "folder",
  async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "relcast-folder-store-"));
    dirs.push(dir);
    return createFolderStore(dir);
  },
  { report: (line) => console.log(line), headers: "derived" },
);
