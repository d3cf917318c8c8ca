import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { renderAppcast } from "../../src/domain/appcast.js";
import { buildCatalog } from "../../src/domain/catalog.js";
import type { ReleaseRecord } from "../../src/domain/record-schema.js";
import { REPO_ROOT } from "../helpers/run-cli.js";

const GOLDEN = path.join(REPO_ROOT, "test", "fixtures", "appcast-golden.xml");

type Autoupdate = NonNullable<ReleaseRecord["autoupdate"]>;

function record(version: string, build: number, seconds: number, extra: Partial<ReleaseRecord> = {}, au: Partial<Autoupdate> = {}): ReleaseRecord {
  return {
    pluginId: "p", displayName: "P", publisher: "Pub", version, semver: version, channel: "stable", artifactType: "dmg",
    summary: `P ${version} & more`, releaseNotes: "- a <b>", releaseNotesList: ["a <b>", "has ]]> inside"], sizeBytes: 10,
    downloadUrl: "", publicDownloadUrl: "", publicLatestDownloadUrl: "", appcastUrl: "", publicAppcastUrl: "",
    objectStore: { bucket: "b", objectPath: "", artifactFileName: "", latestObjectPath: "" },
    autoupdate: { publicDownloadUrl: `https://x.example/downloads/p-${version}.zip`, buildNumber: build, edSignature: "c2ln", sizeBytes: 1234 + build, minimumSystemVersion: "12.0", ...au },
    publishedAt: { _seconds: seconds, _nanoseconds: 0 }, updatedAt: { _seconds: seconds, _nanoseconds: 0 },
    ...extra,
  };
}

/** What Python's xml.etree (an independent parser that resolves namespaces) sees in each item. */
const PY_ITEMS = `
import json, re, sys, xml.etree.ElementTree as ET
URI = "http://www.andymatuschak.org/xml-namespaces/sparkle"
text = sys.stdin.read()
# Sparkle needs the exact http URI bound to the literal prefix "sparkle", and no other binding.
assert re.findall(r'xmlns(?::\\w+)?="[^"]*"', text) == ['xmlns:sparkle="%s"' % URI], re.findall(r'xmlns(?::\\w+)?="[^"]*"', text)
root = ET.fromstring(text)
assert root.tag == "rss" and root.get("version") == "2.0"
channels = root.findall("channel")
assert len(channels) == 1 and channels[0].find("title").text
def tag(t):
    return t.replace("{%s}" % URI, "sparkle:")
out = []
for item in channels[0].findall("item"):
    S = lambda n: item.find("{%s}%s" % (URI, n))
    enc = item.find("enclosure")
    crit = S("criticalUpdate")
    desc = item.find("description")
    out.append({
        "tags": sorted(tag(c.tag) for c in item),
        "short": S("shortVersionString").text, "build": S("version").text,
        "pubDate": item.find("pubDate").text,
        "channel": S("channel").text if S("channel") is not None else None,
        "critical": None if crit is None else (crit.get("{%s}version" % URI) or ""),
        "minimumAutoupdateVersion": S("minimumAutoupdateVersion").text if S("minimumAutoupdateVersion") is not None else None,
        "phasedRolloutInterval": S("phasedRolloutInterval").text if S("phasedRolloutInterval") is not None else None,
        "releaseNotesLink": S("releaseNotesLink").text if S("releaseNotesLink") is not None else None,
        "fullReleaseNotesLink": S("fullReleaseNotesLink").text if S("fullReleaseNotesLink") is not None else None,
        "notesInline": desc is not None and "<li>has ]]&gt; inside</li>" in desc.text,
        "enclosure": {k.replace("{%s}" % URI, "sparkle:"): v for k, v in enc.attrib.items()},
    })
print(json.dumps(out))
`;

function itemsSeenByPython(xml: string): Array<Record<string, unknown>> {
  return JSON.parse(execFileSync("python3", ["-c", PY_ITEMS], { input: xml }).toString());
}

describe("appcast", () => {
  const catalog = buildCatalog("p", [
    record("1.0.0", 100, 1_700_000_000),
    record("1.0.1", 101, 1_700_050_000, {}, { criticalUpdate: { version: "100" } }),
    record("1.1.0-beta.1", 105, 1_700_100_000, { channel: "beta" }, { phasedRolloutInterval: 86400 }),
    record("1.1.0", 110, 1_700_200_000, {}, {
      criticalUpdate: {}, minimumAutoupdateVersion: "100", phasedRolloutInterval: 3600,
      releaseNotesLink: "https://x.example/notes/1.1.0.html?lang=en&plain=1", fullReleaseNotesLink: "https://x.example/notes/",
    }),
    { ...record("0.9.0", 90, 1_600_000_000), autoupdate: undefined },
    { ...record("1.0.2", 102, 1_700_300_000), yanked: true, yankedReason: "crashes", yankedAt: "2023-11-19T00:00:00.000Z" } as ReleaseRecord,
  ]);
  const xml = renderAppcast(catalog.versions, { title: "P updates", link: "https://x.example" });

  it("matches the golden file (a change to the output is a visible diff)", async () => {
    if (process.env.UPDATE_GOLDEN === "1") await writeFile(GOLDEN, xml);
    expect(xml).toBe(await readFile(GOLDEN, "utf8"));
  });

  it("is read by Python's xml.etree as Sparkle would: one namespace, literal prefix, the element set of each item", () => {
    const items = itemsSeenByPython(xml);
    const base = ["enclosure", "pubDate", "sparkle:minimumSystemVersion", "sparkle:shortVersionString", "sparkle:version", "title"];
    expect(items.map((i) => i.short)).toEqual(["1.1.0", "1.1.0-beta.1", "1.0.1", "1.0.0"]);
    const [v110, beta, v101, v100] = items as Array<Record<string, unknown>>;
    expect(v110!.tags).toEqual([...base, "sparkle:criticalUpdate", "sparkle:fullReleaseNotesLink", "sparkle:minimumAutoupdateVersion", "sparkle:phasedRolloutInterval", "sparkle:releaseNotesLink"].sort());
    expect(v110).toMatchObject({
      build: "110", critical: "", minimumAutoupdateVersion: "100", phasedRolloutInterval: "3600", channel: null, notesInline: false,
      releaseNotesLink: "https://x.example/notes/1.1.0.html?lang=en&plain=1", fullReleaseNotesLink: "https://x.example/notes/",
      pubDate: "Fri, 17 Nov 2023 05:46:40 +0000",
    });
    expect(beta!.tags).toEqual([...base, "description", "sparkle:channel", "sparkle:phasedRolloutInterval"].sort());
    expect(beta).toMatchObject({ build: "105", channel: "beta", phasedRolloutInterval: "86400", critical: null, notesInline: true });
    expect(v101!.tags).toEqual([...base, "description", "sparkle:criticalUpdate"].sort());
    expect(v101).toMatchObject({ critical: "100", notesInline: true });
    expect(v100!.tags).toEqual([...base, "description"].sort());
    expect(v100!.enclosure).toEqual({ url: "https://x.example/downloads/p-1.0.0.zip", length: "1334", type: "application/octet-stream", "sparkle:edSignature": "c2ln" });
  });

  it("leaves out yanked releases and releases without an update archive; the catalog keeps them", () => {
    expect(catalog.count).toBe(6);
    expect(xml).not.toContain("1.0.2");
    expect(xml).not.toContain("0.9.0");
  });

  it("keeps the N highest versions per channel, so a late backport never pushes the newest out", () => {
    const withBackport = buildCatalog("p", [...catalog.versions, record("1.0.3", 103, 1_800_000_000)]);
    const short = renderAppcast(withBackport.versions, { title: "t", link: "https://x.example", maxItemsPerChannel: 2 });
    expect(itemsSeenByPython(short).map((i) => i.short)).toEqual(["1.0.3", "1.1.0", "1.1.0-beta.1"]);
    const one = renderAppcast(withBackport.versions, { title: "t", link: "https://x.example", maxItemsPerChannel: 1 });
    expect(itemsSeenByPython(one).map((i) => i.short)).toEqual(["1.1.0", "1.1.0-beta.1"]);
  });
});
