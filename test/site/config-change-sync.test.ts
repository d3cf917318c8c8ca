/**
 * `relcast site sync` after a config change that shows in generated files:
 * every field (displayName, publisher, appcast.maxAppcastItems) is
 * re-rendered into every file it shows in (the canonical appcast, its public
 * copy, index.html, changelog.html), so appcast and pages never disagree and
 * verify passes. Read back with Python's XML parser, not relcast's.
 * (appUrl is also in every record's download URLs, which are written once:
 * docs/site.md says what a move needs.)
 */
import "../helpers/python-without-shim.js"; // python3 and the aws cli without a version manager's shim (see there)
import { execFileSync } from "node:child_process";
import { cp, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publishVersions } from "../helpers/published-store.js";
import { limit } from "../helpers/release-kit.js";
import { runCli as runCliNow } from "../helpers/run-cli.js";
import { ownWorkspace } from "../helpers/st4v-own-workspace.js";
import { cloneWorkspace } from "../helpers/clone-workspace.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../helpers/workspace.js";

// Each test changes a workspace of its own (the config beside a copy of the published store), so the tests run at
// the same time; at most three CLI runs of this file at once (each waits on its child).
const slot = limit(3);
const runCli = (...args: Parameters<typeof runCliNow>) => slot(() => runCliNow(...args));

let base: Workspace;
let published: string;

/** Each file's channel as Python's expat (xml.etree) reads it, one line of JSON per file: one interpreter for the list. */
const PY_CHANNEL = `
import sys, json, xml.etree.ElementTree as E
for f in sys.argv[1:]:
    c = E.parse(f).getroot().find("channel")
    print(json.dumps({"title": c.findtext("title"), "link": c.findtext("link"), "description": c.findtext("description"),
      "items": [i.findtext("title") for i in c.findall("item")]}))
`;
const channelsOf = (...files: string[]) => execFileSync("python3", ["-c", PY_CHANNEL, ...files], { encoding: "utf8" }).trim().split("\n").map((line) => JSON.parse(line));
const channelOf = (file: string) => channelsOf(file)[0];

beforeAll(async () => {
  base = await makeWorkspace();
  await publishVersions(base, [["1.0.0", 100], ["1.1.0", 110]]);
  published = path.join(base.dir, "published");
  await cp(base.storeDir, published, { recursive: true, verbatimSymlinks: true });
});
afterAll(async () => {
  await rm(base.dir, { recursive: true, force: true });
});

const CHANGES: Array<{ field: string; change: Record<string, unknown>; appcast: (c: any) => void; pages: string[] }> = [
  { field: "displayName", change: { displayName: "Bridge Studio" }, appcast: (c) => expect(c.title).toBe("Bridge Studio updates"), pages: ["Bridge Studio"] },
  { field: "publisher", change: { publisher: "Other Tools GmbH" }, appcast: (c) => expect(c.description).toContain("Other Tools GmbH"), pages: ["Other Tools GmbH"] },
  { field: "appcast.maxAppcastItems", change: { appcast: { maxAppcastItems: 1 } }, appcast: (c) => expect(c.items).toHaveLength(1), pages: [] },
];

describe.concurrent("site sync after a config change", () => {
  it.each(CHANGES)("$field: appcast, public appcast and pages show the new value, and verify passes", async ({ change, appcast, pages }) => {
    const ws = await ownWorkspace(base, published, change);
    const sync = await runCli(["site", "sync", "--config", ws.configFile]);
    expect(sync.code, sync.stderr).toBe(0);
    const files = ["releases/appcast.xml", "api/v1/plugins/bridge-plugin/appcast.xml"];
    const channels = channelsOf(...files.map((file) => path.join(ws.storeDir, file)));
    expect(channels).toHaveLength(files.length);
    for (const channel of channels) appcast(channel);
    for (const page of ["index.html", "changelog.html"]) {
      const html = await readFile(path.join(ws.storeDir, page), "utf8");
      for (const text of pages) expect(html, page).toContain(text);
    }
    const verify = await runCli(["verify", "--config", ws.configFile]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });
});

describe.concurrent("site build --out after a config change", () => {
  // One field is enough here: both commands call the same function (the fields are covered above).
  it.each(CHANGES.slice(0, 1))("$field: the same rule as site sync: the folder's appcast and pages show the new value, and the folder's appcast is the store's", async ({ change, appcast, pages }) => {
    const ws = await ownWorkspace(base, published, change);
    const out = path.join(ws.dir, "site-out");
    try {
      const build = await runCli(["site", "build", "--out", out, "--config", ws.configFile]);
      expect(build.code, build.stderr).toBe(0);
      const publicAppcast = path.join(out, "api/v1/plugins/bridge-plugin/appcast.xml");
      appcast(channelOf(publicAppcast));
      expect(await readFile(publicAppcast)).toEqual(await readFile(path.join(ws.storeDir, "releases/appcast.xml")));
      for (const page of ["index.html", "changelog.html"]) {
        const html = await readFile(path.join(out, page), "utf8");
        for (const text of pages) expect(html, page).toContain(text);
      }
      const verify = await runCli(["verify", "--config", ws.configFile]);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});

describe.concurrent("site sync after a config change on a signed appcast", () => {
  // 1.0.0 published once with a signed appcast; the two tests that start from that store each take a copy.
  let signedOne: Workspace;
  beforeAll(async () => {
    signedOne = await makeWorkspace({ appcast: { signedFeed: true } });
    expect((await runCli(signedOne.publishArgs(await signedOne.plugin("1.0.0", 100), "1.0.0"))).code).toBe(0);
  });
  afterAll(async () => {
    await rm(signedOne.dir, { recursive: true, force: true });
  });

  it("is refused (E_KEY) before anything is written, naming rebuild with the key; rebuild then renders and signs it", async () => {
    const signed = await cloneWorkspace(signedOne);
    try {
      const config = JSON.parse(await readFile(signed.configFile, "utf8"));
      await writeFile(signed.configFile, JSON.stringify({ ...config, displayName: "Bridge Studio" }));
      const before = await snapshotTree(signed.storeDir);
      const sync = await runCli(["site", "sync", "--config", signed.configFile]);
      expect(sync.code, sync.stderr).not.toBe(0);
      expect(sync.stderr).toContain("[E_KEY]");
      expect(sync.stderr).toContain("relcast rebuild --key-file");
      expect(await snapshotTree(signed.storeDir)).toEqual(before);
      const rebuilt = await runCli(["rebuild", "--config", signed.configFile, "--key-file", signed.keyFile]);
      expect(rebuilt.code, rebuilt.stderr).toBe(0);
      expect(channelOf(path.join(signed.storeDir, "api/v1/plugins/bridge-plugin/appcast.xml")).title).toBe("Bridge Studio updates");
    } finally {
      await rm(signed.dir, { recursive: true, force: true });
    }
  });

  it("appcast.signedFeed switched to false never unsigns a signed appcast: site sync, rebuild and yank are refused (E_CONFIG) with nothing written", async () => {
    const signed = await cloneWorkspace(signedOne);
    try {
      const config = JSON.parse(await readFile(signed.configFile, "utf8"));
      await writeFile(signed.configFile, JSON.stringify({ ...config, appcast: { ...config.appcast, signedFeed: false } }));
      const before = await snapshotTree(signed.storeDir);
      for (const args of [["site", "sync"], ["rebuild", "--key-file", signed.keyFile], ["yank", "1.0.0", "--key-file", signed.keyFile]]) {
        const run = await runCli([...args, "--config", signed.configFile]);
        expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(3);
        expect(run.stderr).toContain("[E_CONFIG]");
        expect(run.stderr).toMatch(/appcast in the store is signed.*SURequireSignedFeed/s);
        expect(await snapshotTree(signed.storeDir)).toEqual(before);
      }
    } finally {
      await rm(signed.dir, { recursive: true, force: true });
    }
  });

  it("appcast.signedFeed switched on over an unsigned appcast: site sync is refused (E_KEY), not called up to date; rebuild with the key signs it", async () => {
    const ws = await ownWorkspace(base, published, { appcast: { signedFeed: true } });
    const before = await snapshotTree(ws.storeDir);
    const sync = await runCli(["site", "sync", "--config", ws.configFile]);
    expect(sync.code, sync.stdout + sync.stderr).toBe(6);
    expect(sync.stderr).toContain("relcast rebuild --key-file");
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
    const rebuilt = await runCli(["rebuild", "--config", ws.configFile, "--key-file", ws.keyFile]);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    const text = await readFile(path.join(ws.storeDir, "releases/appcast.xml"), "utf8");
    expect(text).toContain("<!-- sparkle-signatures:\nedSignature: ");
    expect((await runCli(["verify", "--config", ws.configFile])).code).toBe(0);
  });

  it("with hosted notes pages: an unchanged config syncs without the key, and a maxAppcastItems change (items, not the channel) is refused", async () => {
    const signed = await makeWorkspace({ appcast: { signedFeed: true, releaseNotes: "page" } });
    try {
      for (const [v, b] of [["1.0.0", 100], ["1.1.0", 110]] as const) {
        expect((await runCli(signed.publishArgs(await signed.plugin(v, b), v))).code).toBe(0);
      }
      const unchanged = await runCli(["site", "sync", "--config", signed.configFile]);
      expect(unchanged.code, unchanged.stderr).toBe(0);
      const config = JSON.parse(await readFile(signed.configFile, "utf8"));
      await writeFile(signed.configFile, JSON.stringify({ ...config, appcast: { ...config.appcast, maxAppcastItems: 1 } }));
      const before = await snapshotTree(signed.storeDir);
      const sync = await runCli(["site", "sync", "--config", signed.configFile]);
      expect(sync.code, sync.stderr).not.toBe(0);
      expect(sync.stderr).toContain("[E_KEY]");
      expect(await snapshotTree(signed.storeDir)).toEqual(before);
    } finally {
      await rm(signed.dir, { recursive: true, force: true });
    }
  });
});
