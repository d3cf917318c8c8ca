import { XMLParser } from "fast-xml-parser";
import { chmod, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { limit, pluginIn } from "../helpers/release-kit.js";
import { makeWorkspace, snapshotTree, type Workspace } from "../helpers/workspace.js";
import { CPU, fatMachO, thinMachO } from "../helpers/mach-o-bytes.js";

/**
 * Bundles a Mac would break are refused before anything is written, and
 * an executable with only Apple-silicon slices makes the item say so
 * (`sparkle:hardwareRequirements`), as generate_appcast does.
 */
// Every refusal below must leave the store as it was, and the last test has a store of its own: they all
// run at once, at most three CLI runs at a time, each refusal on a bundle in a folder of its own.
const slot = limit(3);

describe.concurrent("bundle checks at publish", () => {
  let ws: Workspace;
  let before: Record<string, string>;
  beforeAll(async () => {
    ws = await makeWorkspace();
    const p = await ws.plugin("1.0.0", 100);
    const res = await runCli(ws.publishArgs(p, "1.0.0"));
    expect(res.code, res.stderr).toBe(0);
    before = await snapshotTree(ws.storeDir);
  });
  afterAll(() => rm(ws.dir, { recursive: true, force: true }));

  const exe = (app: string) => path.join(app, "Contents", "MacOS", "BridgePlugin");
  const plist = (app: string) => path.join(app, "Contents", "Info.plist");
  const withIconFile = async (app: string) => writeFile(plist(app), (await readFile(plist(app), "utf8")).replace("<key>CFBundleExecutable</key>", "<key>CFBundleIconFile</key>\n\t<string>AppIcon</string>\n\t<key>CFBundleExecutable</key>"));

  it.each([
    ["a missing executable", 7, /names CFBundleExecutable "BridgePlugin", but the bundle has no file at Contents\/MacOS\/BridgePlugin/, (app: string) => rm(exe(app))],
    ["an executable without its execute bit", 4, /has no execute permission \(mode 0644\)[\s\S]*chmod \+x/, (app: string) => chmod(exe(app), 0o644)],
    ["two names that differ only in case", 4, /holds "(README|readme)\.txt" and "(README|readme)\.txt", one name on macOS/, (app: string) => writeFile(path.join(app, "Contents", "Resources", "readme.txt"), "x")],
    ["NFC and NFD spellings of one name", 4, /one name on macOS's default file system/, async (app: string) => {
      await writeFile(path.join(app, "Contents", "Resources", "caf\u00e9.txt"), "nfc");
      await writeFile(path.join(app, "Contents", "Resources", "cafe\u0301.txt"), "nfd");
    }],
    ["a CFBundleVersion over 15 digits", 7, /CFBundleVersion "1234567890123456" in Info\.plist has more than 15 digits/, async (app: string) => {
      await writeFile(plist(app), (await readFile(plist(app), "utf8")).replace("<string>101</string>", "<string>1234567890123456</string>"));
    }],
    ["a CFBundleExecutable with white space around it", 7, /CFBundleExecutable in .* is "BridgePlugin ", with white space around it/, async (app: string) => {
      await writeFile(plist(app), (await readFile(plist(app), "utf8")).replace("<key>CFBundleExecutable</key>\n\t<string>BridgePlugin</string>", "<key>CFBundleExecutable</key>\n\t<string>BridgePlugin </string>"));
    }],
    ["a CFBundleVersion with leading zeros", 7, /CFBundleVersion "0101" in Info\.plist has leading zeros/, async (app: string) => {
      await writeFile(plist(app), (await readFile(plist(app), "utf8")).replace("<string>101</string>", "<string>0101</string>"));
    }],
    ["a CFBundleIconFile naming no file", 7, /names CFBundleIconFile "AppIcon", but the bundle has no Contents\/Resources\/AppIcon\.icns; Finder would show a generic icon/, (app: string) => withIconFile(app)],
    ["an icon that is not an .icns file", 4, /the icon Contents\/Resources\/AppIcon\.icns is not a valid \.icns file: it does not start with the \.icns magic/, async (app: string) => {
      await withIconFile(app);
      await writeFile(path.join(app, "Contents", "Resources", "AppIcon.icns"), "a PNG renamed, or a text file");
    }],
  ])("refuses %s (exit %i) and writes nothing", (name, exit, message, spoil) => slot(async () => {
    const p = await pluginIn(ws, name.replace(/\W+/g, "-"), "1.1.0", 101);
    await spoil(p.app);
    const res = await runCli(ws.publishArgs(p, "1.1.0"));
    expect(res.code, res.stderr).toBe(exit);
    expect(res.stderr).toMatch(message);
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
  }));

  it("writes sparkle:hardwareRequirements arm64 for an arm64-only executable, and none for a universal one", () => slot(async () => {
    const one = await makeWorkspace();
    try {
      const arm = await one.plugin("2.0.0", 200);
      await writeFile(exe(arm.app), thinMachO(CPU.arm64));
      expect((await runCli(one.publishArgs(arm, "2.0.0"))).code).toBe(0);
      const universal = await one.plugin("2.1.0", 210);
      await writeFile(exe(universal.app), fatMachO([CPU.x86_64, CPU.arm64]));
      const res = await runCli(one.publishArgs(universal, "2.1.0"));
      expect(res.code, res.stderr).toBe(0);
      const xml = await readFile(path.join(one.storeDir, "releases", "appcast.xml"), "utf8");
      const items = new XMLParser({ ignoreAttributes: false }).parse(xml).rss.channel.item as Array<Record<string, unknown>>;
      const byVersion = new Map(items.map((i) => [String(i["sparkle:shortVersionString"]), i]));
      expect(byVersion.get("2.0.0")!["sparkle:hardwareRequirements"]).toBe("arm64");
      expect(byVersion.get("2.1.0")!["sparkle:hardwareRequirements"]).toBeUndefined();
      const record = JSON.parse(await readFile(path.join(one.storeDir, "releases", "2.0.0", "release.json"), "utf8"));
      expect(record.autoupdate.hardwareRequirements).toBe("arm64");
      const verify = await runCli(["verify", "--config", one.configFile]);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
      // An item that drops the requirement would offer an Intel Mac an update it cannot run: verify says so.
      await writeFile(path.join(one.storeDir, "releases", "appcast.xml"), xml.replace("<sparkle:hardwareRequirements>arm64</sparkle:hardwareRequirements>", ""));
      const tampered = await runCli(["verify", "--config", one.configFile]);
      expect(tampered.code).toBe(11);
      expect(tampered.stdout + tampered.stderr).toMatch(/sparkle:hardwareRequirements is missing but the catalog says "arm64"/);
    } finally {
      await rm(one.dir, { recursive: true, force: true });
    }
  }));
});
