import { execFileSync } from "node:child_process";
import { symlinkSync } from "node:fs";
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { limit } from "../helpers/release-kit.js";
import { makeWorkspace, newKey, snapshotTree, type Workspace } from "../helpers/workspace.js";

type Plugin = { app: string; dmg: string; notes: string };
interface Case {
  name: string;
  exit: number;
  message: RegExp;
  prepare(ws: Workspace, p: Plugin): Promise<{ args: string[]; env?: NodeJS.ProcessEnv; unchanged?: string }>;
}

/** Notes whose bytes hold a character XML 1.0 does not allow; the appcast would stop parsing everywhere. */
function notesCase(label: string, bytes: Buffer, where: string, char: string): Case {
  return {
    name: `notes with ${label}`, exit: 4, message: new RegExp(`notes file .*\\.md: ${where}: character ${char} is not allowed in XML 1\\.0`),
    prepare: async (ws, p) => { const f = path.join(ws.dir, `notes-${label.replace(/\W+/g, "-")}.md`); await writeFile(f, bytes); return { args: ws.publishArgs({ ...p, notes: f }, "2.0.0") }; },
  };
}

let configFiles = 0;
/** A config that differs from the workspace's in one field (in a file of its own: the cases run at once). */
function configCase(name: string, field: Record<string, unknown>, message: RegExp): Case {
  return {
    name, exit: 3, message,
    prepare: async (ws, p) => {
      const f = path.join(ws.dir, `config-${++configFiles}-${name.replace(/\W+/g, "-")}.json`);
      await writeFile(f, JSON.stringify({ pluginId: "bridge-plugin", displayName: "Bridge Plugin", publisher: "Example Tools", appUrl: "https://updates.example.com", store: "file://./store", ...field }));
      return { args: [...ws.publishArgs(p, "2.0.0"), "--config", f] };
    },
  };
}

/** A fresh copy of the 2.0.0 bundle, changed by `edit` (its own name, so cases do not share a bundle). */
function bundleCase(name: string, exit: number, message: RegExp, edit: (app: string, ws: Workspace) => Promise<void>): Case {
  return {
    name, exit, message,
    prepare: async (ws) => {
      const p = await ws.plugin("2.0.0", 200, { name: `Case${name.replace(/\W+/g, "")}` });
      await edit(p.app, ws);
      return { args: ws.publishArgs(p, "2.0.0") };
    },
  };
}

/** The workspace's Ed25519 seed as the PEM (PKCS#8) file OpenSSL writes, made by Python's cryptography (an independent encoder). */
function pemOf(seedBase64: string): string {
  return execFileSync("python3", ["-c", [
    "import sys, base64",
    "from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey",
    "from cryptography.hazmat.primitives import serialization as s",
    "k = Ed25519PrivateKey.from_private_bytes(base64.b64decode(sys.argv[1]))",
    "sys.stdout.write(k.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, s.NoEncryption()).decode())",
  ].join("\n"), seedBase64], { encoding: "utf8" });
}

/** Rewrites one Info.plist key with Python's plistlib (an independent plist writer). */
function setPlistKey(app: string, key: string, pythonValue: string): void {
  execFileSync("python3", ["-c", `import plistlib,sys\nf=sys.argv[1]\nd=plistlib.load(open(f,"rb"))\nd[sys.argv[2]]=${pythonValue}\nplistlib.dump(d,open(f,"wb"))`, path.join(app, "Contents", "Info.plist"), key]);
}

const cases: Case[] = [
  // Item 1: text that reaches appcast, catalog and pages holds only XML 1.0 characters.
  notesCase("a terminal colour escape", Buffer.from("- fine\n- \x1b[31mred\x1b[0m\n"), "line 2, column 3", "U\\+001B"),
  notesCase("a NUL", Buffer.from("- nul\0here\n"), "line 1, column 6", "U\\+0000"),
  notesCase("a vertical tab", Buffer.from("- one\n\n- two\x0bthree\n"), "line 3, column 6", "U\\+000B"),
  notesCase("a form feed", Buffer.from("\x0c- page\n"), "line 1, column 1", "U\\+000C"),
  notesCase("U+FFFE", Buffer.from("- odd \uFFFE char\n", "utf8"), "line 1, column 7", "U\\+FFFE"),
  { name: "notes with an encoded surrogate (CESU-8)", exit: 4, message: /surrogate\.md is not valid UTF-8: line 3, column 3 \(byte offset 7\) starts with byte 0xED/, prepare: async (ws, p) => { const f = path.join(ws.dir, "surrogate.md"); await writeFile(f, Buffer.from([0x2d, 0x20, 0x61, 0x0a, 0x0a, 0x2d, 0x20, 0xed, 0xa0, 0x80, 0x0a])); return { args: ws.publishArgs({ ...p, notes: f }, "2.0.0") }; } },
  { name: "--summary with an escape sequence", exit: 4, message: /--summary: line 1, column 4: character U\+001B is not allowed in XML 1\.0/, prepare: async (ws, p) => ({ args: ws.publishArgs(p, "2.0.0", ["--summary", "New\x1b[1m bold"]) }) },
  configCase("displayName with a bell character", { displayName: "Bridge\u0007" }, /field "displayName" has a character feeds cannot hold \(line 1, column 7: character U\+0007/),
  configCase("publisher with an escape", { publisher: "\u001b[31mTools" }, /field "publisher" has a character feeds cannot hold \(line 1, column 1: character U\+001B/),
  configCase("assistantIntegration with a NUL", { assistantIntegration: ["ok", "b\u0000d"] }, /field "assistantIntegration\.1" has a character feeds cannot hold/),
  configCase("appUrl javascript:", { appUrl: "javascript:alert(1)" }, /field "appUrl" is not an absolute http\(s\) URL \(it must start with https:\/\//),
  configCase("appUrl relative", { appUrl: "updates.example.com" }, /field "appUrl" is not an absolute http\(s\) URL/),
  configCase("appUrl with a space", { appUrl: "https://updates.example.com/a b" }, /field "appUrl" has the character U\+0020 at position 30[\s\S]*a space is %20/),
  configCase("appUrl with a query", { appUrl: "https://updates.example.com/?x=1" }, /field "appUrl" has a query or fragment/),
  configCase("releaseNotesUrl that is a file URL", { appcast: { releaseNotesUrl: "file:///etc/passwd" } }, /field "appcast\.releaseNotesUrl" is not an absolute http\(s\) URL/),
  { name: "--release-notes-url with a control character", exit: 2, message: /--release-notes-url .* has the character U\+001B at position 19/, prepare: async (ws, p) => ({ args: ws.publishArgs(p, "2.0.0", ["--release-notes-url", "https://a.example/\x1b{version}"]) }) },
  // Item 6: a key where a path belongs is refused without echoing it (the matrix checks the seed is nowhere in the output).
  { name: "the key itself as --key-file", exit: 6, message: /the --key-file value looks like a key itself, not the path of a key file \(the value is not shown\)/, prepare: async (ws, p) => ({ args: [...ws.publishArgs(p, "2.0.0").filter((a, i, all) => a !== "--key-file" && all[i - 1] !== "--key-file"), "--key-file", ws.key.seedBase64] }) },
  // Item 10: user mistakes get their own class and a fix, never exit 70.
  configCase("pluginId over 64 characters", { pluginId: "p".repeat(65) }, /field "pluginId" must be at most 64 characters/),
  bundleCase("non-UTF-8 file name", 4, /the bundle has a file name that is not valid UTF-8: .*\/Contents\/Resources\/caf\\xe9\.txt/, async (app) => { await writeFile(Buffer.concat([Buffer.from(path.join(app, "Contents", "Resources", "caf")), Buffer.from([0xe9]), Buffer.from(".txt")]), "latin1 name"); }),
  bundleCase("CFBundleShortVersionString that is a number", 7, /CFBundleShortVersionString in .*Info\.plist is <real>2\.5<\/real>, not a <string>/, async (app) => setPlistKey(app, "CFBundleShortVersionString", "2.5")),
  bundleCase("CFBundleShortVersionString that is an array", 7, /CFBundleShortVersionString in .*Info\.plist is an <array>, not a <string>/, async (app) => setPlistKey(app, "CFBundleShortVersionString", '["2.0.0"]')),
  bundleCase("SUPublicEDKey that is not base64", 7, /SUPublicEDKey "not a key!" in the bundle's Info\.plist is malformed: it is not base64/, async (app) => setPlistKey(app, "SUPublicEDKey", '"not a key!"')),
  bundleCase("SUPublicEDKey of the wrong length", 7, /SUPublicEDKey "AAAAAAAAAAAAAAAAAAAAAA==" in the bundle's Info\.plist is malformed: it decodes to 16 bytes, not the 32/, async (app) => setPlistKey(app, "SUPublicEDKey", '"AAAAAAAAAAAAAAAAAAAAAA=="')),
  // Item 5: symlinks resolve inside the bundle, through every link on the way.
  bundleCase("symlink chain that leaves the bundle", 4, /symlink .*\/Contents\/Resources\/a -> b climbs above the bundle/, async (app) => { await symlink("b", path.join(app, "Contents", "Resources", "a")); await symlink("../../../outside", path.join(app, "Contents", "Resources", "b")); }),
  bundleCase("symlink whose .. follows a link to a folder", 4, /symlink .*\/Contents\/Resources\/e -> \.\.\/up\/\.\. climbs above the bundle/, async (app) => { await symlink("..", path.join(app, "Contents", "up")); await symlink("../up/..", path.join(app, "Contents", "Resources", "e")); }),
  bundleCase("absolute symlink to a folder outside, used by another link", 4, /symlink .*\/Contents\/Frameworks\/out -> \/etc reaches Contents\/Frameworks\/out -> \/etc, an absolute path outside the bundle/, async (app) => { await symlink("/etc", path.join(app, "Contents", "Frameworks", "out")); await symlink("../Frameworks/out/passwd", path.join(app, "Contents", "Resources", "secret")); }),
  bundleCase("symlink loop", 4, /symlink .*\/Contents\/Resources\/loop1 -> loop2 is a loop of links/, async (app) => { await symlink("loop2", path.join(app, "Contents", "Resources", "loop1")); await symlink("loop1", path.join(app, "Contents", "Resources", "loop2")); }),
  // Link targets are bytes: one that is not UTF-8 would be zipped decoded (U+FFFD), unlike the link codesign sealed.
  bundleCase("symlink whose target is not UTF-8", 4, /the bundle has a symlink whose target is not valid UTF-8: .*\/Contents\/Resources\/latin1 -> caf\\xe9\.txt/, async (app) => { symlinkSync(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74]), Buffer.from(path.join(app, "Contents", "Resources", "latin1"))); }),
  bundleCase("symlink ending in / that names a file", 4, /symlink .*\/Contents\/Resources\/plist -> \.\.\/Info\.plist\/ ends in "\/" but reaches Contents\/Info\.plist, which is not a folder/, async (app) => { await symlink("../Info.plist/", path.join(app, "Contents", "Resources", "plist")); }),
  // One name rule with the zip readers: a name they refuse is refused here, before zip and sign (was: published, and
  // every later publish that makes deltas failed on it).
  bundleCase("file name with a backslash", 4, /the bundle has a name that cannot be in an update zip: .*\/Contents\/Resources\/x\\y holds a backslash[\s\S]*fix: rename it/, async (app) => { await writeFile(path.join(app, "Contents", "Resources", "x\\y"), "hi"); }),
  bundleCase("symlink target longer than macOS allows", 4, /symlink .*\/Contents\/Resources\/long -> (\.\/)+… \(1110 bytes\) reaches Contents\/Resources\/long -> .*, which has a 1110-byte target, longer than the 1023 bytes macOS can make/, async (app) => { await symlink(`${"./".repeat(550)}Info.plist`, path.join(app, "Contents", "Resources", "long")); }),
  bundleCase("symlink a/../X/ that names a file as written", 4, /symlink .*\/Contents\/l: link \/Contents\/l points at "a\/\.\.\/X\/", which ends in "\/" \(a folder\) but, read as text, names the file \/Contents\/X/, async (app) => { await writeFile(path.join(app, "Contents", "X"), "file"); await mkdir(path.join(app, "Contents", "Resources", "X")); await mkdir(path.join(app, "Contents", "Resources", "deep")); await symlink("Resources/deep", path.join(app, "Contents", "a")); await symlink("a/../X/", path.join(app, "Contents", "l")); }),
  bundleCase("dangling symlink", 4, /symlink .*\/Contents\/Resources\/gone -> nowhere goes to Contents\/Resources\/nowhere, which does not exist in the bundle/, async (app) => { await symlink("nowhere", path.join(app, "Contents", "Resources", "gone")); }),
  { name: "missing disk image", exit: 4, message: /disk image not found: .*nope\.dmg/, prepare: async (ws, p) => ({ args: ws.publishArgs({ ...p, dmg: path.join(ws.dir, "nope.dmg") }, "2.0.0") }) },
  { name: "empty disk image", exit: 4, message: /is empty \(0 bytes\)/, prepare: async (ws, p) => { const f = path.join(ws.dir, "empty.dmg"); await writeFile(f, ""); return { args: ws.publishArgs({ ...p, dmg: f }, "2.0.0") }; } },
  { name: "folder that is not a bundle", exit: 4, message: /is not a bundle: Contents\/Info\.plist is missing/, prepare: async (ws, p) => { const d = path.join(ws.dir, "notabundle"); await mkdir(d, { recursive: true }); return { args: ws.publishArgs({ ...p, app: d }, "2.0.0") }; } },
  { name: "missing notes", exit: 4, message: /cannot read notes file/, prepare: async (ws, p) => ({ args: ws.publishArgs({ ...p, notes: path.join(ws.dir, "none.md") }, "2.0.0") }) },
  { name: "non-UTF-8 notes", exit: 4, message: /latin1\.md is not valid UTF-8: line 1, column 3 \(byte offset 2\) starts with byte 0xE9/, prepare: async (ws, p) => { const f = path.join(ws.dir, "latin1.md"); await writeFile(f, Buffer.from([0x2d, 0x20, 0xe9, 0xff, 0x0a])); return { args: ws.publishArgs({ ...p, notes: f }, "2.0.0") }; } },
  { name: "version 1.2", exit: 5, message: /"1\.2" is not a semantic version/, prepare: async (ws, p) => ({ args: ws.publishArgs(p, "1.2") }) },
  { name: "version with leading zero", exit: 5, message: /"01\.2\.3" is not a semantic version/, prepare: async (ws, p) => ({ args: ws.publishArgs(p, "01.2.3") }) },
  { name: "version with build metadata", exit: 5, message: /build metadata/, prepare: async (ws, p) => ({ args: ws.publishArgs(p, "2.0.0+7") }) },
  { name: "key of the wrong length", exit: 6, message: /decodes to 16 bytes; expected 32 \(seed\) or 96/, prepare: async (ws, p) => { const f = path.join(ws.dir, "short.key"); await writeFile(f, Buffer.alloc(16, 7).toString("base64")); return { args: [...ws.publishArgs(p, "2.0.0"), "--key-file", f] }; } },
  { name: "key that is not base64", exit: 6, message: /not valid base64/, prepare: async (ws, p) => { const f = path.join(ws.dir, "bad.key"); await writeFile(f, "not*base64!"); return { args: [...ws.publishArgs(p, "2.0.0"), "--key-file", f] }; } },
  { name: "no key at all", exit: 6, message: /no signing key given/, prepare: async (ws, p) => ({ args: ws.publishArgs(p, "2.0.0").filter((a, i, all) => a !== "--key-file" && all[i - 1] !== "--key-file"), env: { RELCAST_SIGNING_KEY: "" } }) },
  { name: "key that does not match SUPublicEDKey", exit: 6, message: /does not match SUPublicEDKey/, prepare: async (ws) => { const other = newKey(); const p = await ws.plugin("2.0.0", 200, { publicKey: other.publicKeyBase64, name: "Other" }); return { args: ws.publishArgs(p, "2.0.0") }; } },
  { name: "CFBundleShortVersionString mismatch", exit: 7, message: /CFBundleShortVersionString in Info\.plist is 2\.0\.0, but --version is 2\.0\.1/, prepare: async (ws, p) => ({ args: ws.publishArgs(p, "2.0.1") }) },
  configCase("a misspelled config field", { chanel: "beta" }, /unknown field "chanel" \(did you mean "channel"\?\)/),
  configCase("a misspelled nested config field", { appcast: { signedfeed: true } }, /unknown field "signedfeed" \(did you mean "signedFeed"\?\) in "appcast"/),
  { name: "a whole changelog as --notes", exit: 4, message: /notes file .*CHANGELOG\.md is a whole changelog: it has 3 version headings \("\[2\.0\.0\] - 2026-11-20", "\[1\.0\.0\] - 2026-10-01", "\[0\.9\.0\]"\)[\s\S]*fix: pass it as --changelog .*CHANGELOG\.md/, prepare: async (ws, p) => { const f = path.join(ws.dir, "CHANGELOG.md"); await writeFile(f, "# Changelog\n\n## [2.0.0] - 2026-11-20\n- New\n\n## [1.0.0] - 2026-10-01\n- First\n\n## [0.9.0]\n- Beta\n"); return { args: ws.publishArgs({ ...p, notes: f }, "2.0.0") }; } },
  { name: "a PEM Ed25519 key", exit: 6, message: /signing key from key file .*key\.pem is a PEM file \(PRIVATE KEY\)[\s\S]*fix: convert it once: openssl pkey -in key\.pem -outform DER \| tail -c 32 \| base64 > key\.txt/, prepare: async (ws, p) => { const f = path.join(ws.dir, "key.pem"); await writeFile(f, pemOf(ws.key.seedBase64)); return { args: [...ws.publishArgs(p, "2.0.0"), "--key-file", f] }; } },
  { name: "a PEM RSA key", exit: 6, message: /is a PEM file \(PRIVATE KEY\) holding an RSA key; Sparkle signs only with Ed25519[\s\S]*fix: create an Ed25519 key with `relcast keys generate/, prepare: async (ws, p) => { const f = path.join(ws.dir, "rsa.pem"); execFileSync("openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", f], { stdio: "ignore" }); return { args: [...ws.publishArgs(p, "2.0.0"), "--key-file", f] }; } },
  { name: "config with an unknown field", exit: 3, message: /unknown field.*colour|colour.*unknown/i, prepare: async (ws, p) => { const f = path.join(ws.dir, "bad-config.json"); await writeFile(f, JSON.stringify({ pluginId: "x", displayName: "X", publisher: "P", appUrl: "https://a.example", colour: "red" })); return { args: [...ws.publishArgs(p, "2.0.0"), "--config", f] }; } },
  { name: "config missing appUrl", exit: 3, message: /appUrl.*missing|missing.*appUrl/, prepare: async (ws, p) => { const f = path.join(ws.dir, "no-url.json"); await writeFile(f, JSON.stringify({ pluginId: "x", displayName: "X", publisher: "P" })); return { args: [...ws.publishArgs(p, "2.0.0"), "--config", f] }; } },
  { name: "config that is not JSON", exit: 3, message: /is not valid JSON/, prepare: async (ws, p) => { const f = path.join(ws.dir, "broken.json"); await writeFile(f, "{ pluginId: "); return { args: [...ws.publishArgs(p, "2.0.0"), "--config", f] }; } },
  { name: "notes over 256 KiB", exit: 4, message: /notes file .*huge\.md is \d+ bytes; the limit is 262144/, prepare: async (ws, p) => { const f = path.join(ws.dir, "huge.md"); await writeFile(f, "- a very long note\n".repeat(20_000)); return { args: ws.publishArgs({ ...p, notes: f }, "2.0.0") }; } },
  { name: "--dmg that is a folder", exit: 4, message: /--dmg .* is not a file/, prepare: async (ws, p) => ({ args: ws.publishArgs({ ...p, dmg: ws.dir }, "2.0.0") }) },
  { name: "--app that is a file", exit: 4, message: /--app .* is a file, not a bundle folder/, prepare: async (ws, p) => ({ args: ws.publishArgs({ ...p, app: p.dmg }, "2.0.0") }) },
  { name: "prerelease whose build ranks below an older release", exit: 5, message: /build order: .*2\.0\.0-rc\.1 \(build 50\)/, prepare: async (ws) => { const rc = await ws.plugin("2.0.0-rc.1", 50); return { args: ws.publishArgs(rc, "2.0.0-rc.1", ["--channel", "stable"]) }; } },
  { name: "prerelease on the stable channel by default", exit: 5, message: /2\.0\.0-beta\.1 is a prerelease, and this publish would put it on the stable channel[\s\S]*--channel beta/, prepare: async (ws) => { const beta = await ws.plugin("2.0.0-beta.1", 150); return { args: ws.publishArgs(beta, "2.0.0-beta.1") }; } },
  // Item 8 of issue 35: a closed port on 127.0.0.1 is the network class, as the README's exit-code table says.
  { name: "unreachable S3 endpoint", exit: 13, message: /error \[E_NETWORK\]: .*endpoint unreachable/, prepare: async (ws, p) => { const f = path.join(ws.dir, "s3-down.json"); await writeFile(f, JSON.stringify({ pluginId: "bridge-plugin", displayName: "B", publisher: "P", appUrl: "https://a.example", store: "s3://relcast-nowhere", s3: { endpoint: "http://127.0.0.1:1", forcePathStyle: true, region: "us-east-1", requestTimeoutMs: 500 } })); return { args: [...ws.publishArgs(p, "2.0.0"), "--config", f], env: { AWS_ACCESS_KEY_ID: "test", AWS_SECRET_ACCESS_KEY: "test" } }; } },
  { name: "catalog hand-edited into invalid JSON", exit: 12, message: /catalog .*catalog\.json is not valid JSON[\s\S]*relcast rebuild/, prepare: async (ws, p) => { const store = path.join(ws.dir, "broken-store"); await mkdir(path.join(store, "releases"), { recursive: true }); await writeFile(path.join(store, "releases", "catalog.json"), '{"pluginId": "bridge-plugin", "count": 1, "versions": [ {"version": "1.0.0",'); return { args: [...ws.publishArgs(p, "2.0.0"), "--store", `file://${store}`], unchanged: store }; } },
  // Sparkle reads every feed URL with NSURL, which (macOS 13 and earlier) answers nil for text that is not RFC 3986.
  ...(['https://x.example/a"b', "https://ünï.example", "https://x.example/a{b}", "https://x.example/a\\b", "https://x.example/a<b>", "https://x.example/%zz"].map((appUrl) =>
    configCase(`appUrl ${appUrl}`, { appUrl }, /appUrl[\s\S]*(percent-encode|punycode|%25)/))),
  configCase("an appcast.link template with a brace left in", { appcast: { link: "https://x.example/notes/{version}/{page}" } }, /appcast\.link[\s\S]*"\{" \(U\+007B\)[\s\S]*percent-encode/),
  configCase("a config store naming no bucket", { store: "s3://" }, /store[\s\S]*"s3:\/\/" names no valid S3 bucket/),
  { name: "--link with a quote", exit: 2, message: /--link "https:\/\/x\.example\/a\\"b" has the character """ \(U\+0022\)[\s\S]*percent-encode/, prepare: async (ws, p) => ({ args: ws.publishArgs(p, "2.0.0", ["--link", 'https://x.example/a"b']) }) },
  { name: "--release-notes-url with a non-ASCII path", exit: 2, message: /--release-notes-url .* non-ASCII character "é" \(U\+00E9\)[\s\S]*%C3%BC/, prepare: async (ws, p) => ({ args: ws.publishArgs(p, "2.0.0", ["--release-notes-url", "https://x.example/notes/{version}/café.html"]) }) },
  { name: "--full-release-notes-url with a bad escape", exit: 2, message: /--full-release-notes-url .* without two hex digits/, prepare: async (ws, p) => ({ args: ws.publishArgs(p, "2.0.0", ["--full-release-notes-url", "https://x.example/100%"]) }) },
  { name: "--summary with a right-to-left override", exit: 4, message: /--summary: character U\+202E \(RIGHT-TO-LEFT OVERRIDE\) at position 5/, prepare: async (ws, p) => ({ args: ws.publishArgs(p, "2.0.0", ["--summary", "Fix \u202Eexe.txt"]) }) },
  { name: "unsupported store URL", exit: 3, message: /unsupported store URL "ftp:\/\/x"/, prepare: async (ws, p) => ({ args: [...ws.publishArgs(p, "2.0.0"), "--store", "ftp://x"] }) },
];

describe("publish refuses bad input with one clear error and writes nothing", () => {
  let ws: Workspace;
  let plugin: Plugin;
  let before: Record<string, string>;
  beforeAll(async () => {
    ws = await makeWorkspace();
    const first = await ws.plugin("1.0.0", 100);
    const res = await runCli(ws.publishArgs(first, "1.0.0"));
    expect(res.code, res.stderr).toBe(0);
    plugin = await ws.plugin("2.0.0", 200);
    before = await snapshotTree(ws.storeDir);
  });

  // The cases are independent refusals that each must leave the store as it was, so they run three at a
  // time (each its own CLI process); every case still checks the whole store after its own run.
  const slot = limit(3);
  it.concurrent.for(cases)("$name → exit $exit", (c, { expect }) => slot(async () => {
    const { args, env, unchanged } = await c.prepare(ws, plugin);
    const other = unchanged ? await snapshotTree(unchanged) : undefined;
    const res = await runCli(args, env ? { env } : {});
    expect(res.code, res.stderr).toBe(c.exit);
    expect(res.stderr).toMatch(c.message);
    expect(res.stderr).toMatch(/^ {2}fix: \S/m);
    expect(res.stderr).not.toMatch(/\n\s+at .*\.js:\d+/);
    expect(res.stderr.split("\n").filter((l) => l.startsWith("relcast: error"))).toHaveLength(1);
    expect(res.stdout + res.stderr).not.toContain(ws.key.seedBase64);
    expect(await snapshotTree(ws.storeDir)).toEqual(before);
    if (unchanged) expect(await snapshotTree(unchanged)).toEqual(other);
  }));

  it("prints a stack trace only with --debug", async () => {
    const res = await runCli(["--debug", ...ws.publishArgs(plugin, "1.2")]);
    expect(res.code).toBe(5);
    expect(res.stderr).toMatch(/\n\s+at /);
  });

  it("a store folder that cannot be created is a store error", async () => {
    const blocker = path.join(ws.dir, "blocker");
    await writeFile(blocker, "a file where the store folder should be");
    const res = await runCli([...ws.publishArgs(plugin, "2.0.0"), "--store", `file://${blocker}/store`]);
    expect(res.code, res.stderr).toBe(9);
    expect(res.stderr).toMatch(/folder store .*blocker\/store is not writable/);
    await rm(blocker);
  });
});
