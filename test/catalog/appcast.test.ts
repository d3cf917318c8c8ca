import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { renderAppcast } from "../../src/catalog/appcast.js";
import { buildCatalog } from "../../src/catalog/catalog.js";
import type { ReleaseRecord } from "../../src/release/record-schema.js";
import { REPO_ROOT } from "../helpers/run-cli.js";

const GOLDEN = path.join(REPO_ROOT, "test", "fixtures", "appcast-golden.xml");

function record(version: string, build: number, seconds: number, extra: Partial<ReleaseRecord> = {}): ReleaseRecord {
  return {
    pluginId: "p", displayName: "P", publisher: "Pub", version, semver: version, channel: "stable", artifactType: "dmg",
    summary: `P ${version} & more`, releaseNotes: "- a <b>", releaseNotesList: ["a <b>", "has ]]> inside"], sizeBytes: 10,
    downloadUrl: "", publicDownloadUrl: "", publicLatestDownloadUrl: "", appcastUrl: "", publicAppcastUrl: "",
    objectStore: { bucket: "b", objectPath: "", artifactFileName: "", latestObjectPath: "" },
    autoupdate: { publicDownloadUrl: `https://x.example/downloads/p-${version}.zip`, buildNumber: build, edSignature: "c2ln", sizeBytes: 1234 + build, minimumSystemVersion: "12.0" },
    publishedAt: { _seconds: seconds, _nanoseconds: 0 }, updatedAt: { _seconds: seconds, _nanoseconds: 0 },
    ...extra,
  };
}

describe("appcast", () => {
  const catalog = buildCatalog("p", [
    record("1.0.0", 100, 1_700_000_000),
    record("1.1.0-beta.1", 105, 1_700_100_000, { channel: "beta" }),
    record("1.1.0", 110, 1_700_200_000),
    { ...record("0.9.0", 90, 1_600_000_000), autoupdate: undefined },
  ]);
  const xml = renderAppcast(catalog.versions, { title: "P updates", link: "https://x.example" });

  it("matches the golden file (a change to the output is a visible diff)", async () => {
    if (process.env.UPDATE_GOLDEN === "1") await writeFile(GOLDEN, xml);
    expect(xml).toBe(await readFile(GOLDEN, "utf8"));
  });

  it("is read by Python's xml.etree as Sparkle would: namespace, channel, CDATA notes, enclosure", () => {
    const script = `
import sys, xml.etree.ElementTree as ET
S = "{http://www.andymatuschak.org/xml-namespaces/sparkle}"
root = ET.fromstring(sys.stdin.read())
for item in root.find("channel").findall("item"):
    ch = item.find(S + "channel")
    enc = item.find("enclosure")
    print(item.find(S + "shortVersionString").text, ch.text if ch is not None else "-", enc.get("length"), enc.get(S + "edSignature"), "has ]]&gt; inside" in item.find("description").text)
`;
    const out = execFileSync("python3", ["-c", script], { input: xml }).toString().trim().split("\n");
    expect(out).toEqual(["1.1.0 - 1344 c2ln True", "1.1.0-beta.1 beta 1339 c2ln True", "1.0.0 - 1334 c2ln True"]);
  });

  it("keeps only the newest N items per channel when asked", () => {
    const short = renderAppcast(catalog.versions, { title: "t", link: "https://x.example", maxItemsPerChannel: 1 });
    expect(short.match(/<item>/g)).toHaveLength(2);
  });
});
