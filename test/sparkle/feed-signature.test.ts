import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signEd25519 } from "../../src/sparkle/ed25519-stream.js";
import { feedSignatureBlock, feedSignatureProblem, signFeed, splitSignedFeed } from "../../src/sparkle/feed-signature.js";
import { parseSigningKey } from "../../src/sparkle/signing-key.js";

const key = parseSigningKey(randomBytes(32).toString("base64"), "test");
const FEED = Buffer.from('<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel><title>t</title></channel></rss>\n');

describe("the signature block, found where Sparkle finds it (SPUExtractSignedFeed.m)", () => {
  it("signs every byte before the block and appends sign_update's block", async () => {
    const signed = await signFeed(FEED, key);
    expect(signed.subarray(0, FEED.length).equals(FEED)).toBe(true);
    expect(signed.subarray(FEED.length).toString()).toMatch(/^<!-- sparkle-signatures:\nedSignature: [A-Za-z0-9+/]{86}==\nlength: 100\n-->\n$/);
    expect(await feedSignatureProblem(signed, key.publicKey)).toBeUndefined();
    // Signing a signed feed replaces its block: the same bytes again.
    expect((await signFeed(signed, key)).equals(signed)).toBe(true);
  });

  it("uses the LAST prefix, ignores bytes after -->, and reads the lines trimmed", async () => {
    const signed = await signFeed(FEED, key);
    const sig = splitSignedFeed(signed).block!.edSignature!;
    // An earlier block inside the signed content is just content.
    const nested = Buffer.concat([Buffer.from("<!-- sparkle-signatures:\nedSignature: x\n-->\n"), FEED]);
    const twice = Buffer.concat([nested, Buffer.from(feedSignatureBlock(await signEd25519(key, nested), nested.length))]);
    expect(splitSignedFeed(twice).content.equals(nested)).toBe(true);
    expect(await feedSignatureProblem(twice, key.publicKey)).toBeUndefined();
    const loose = Buffer.concat([FEED, Buffer.from(`<!-- sparkle-signatures:\nedSignature:   ${sig}  \nlength: ${FEED.length}\n-->trailing junk`)]);
    expect(await feedSignatureProblem(loose, key.publicKey)).toBeUndefined();
  });

  it("treats a block without -->, with invalid UTF-8 or with CRLF line ends as no signature", async () => {
    const signed = await signFeed(FEED, key);
    expect(splitSignedFeed(signed.subarray(0, signed.length - 4)).block).toBeUndefined();
    const badUtf8 = Buffer.concat([FEED, Buffer.from("<!-- sparkle-signatures:\n"), Buffer.from([0xff, 0xfe]), Buffer.from("\n-->\n")]);
    expect(splitSignedFeed(badUtf8).block).toBeUndefined();
    const crlf = Buffer.from(signed.toString().replace(/\n(?=edSignature|length|-->)/g, "\r\n").replace("signatures:\n", "signatures:\r\n"));
    expect(await feedSignatureProblem(crlf, key.publicKey)).toMatch(/CRLF line ends/);
  });

  it("reports a changed byte, a wrong length, another key and a malformed signature", async () => {
    const signed = await signFeed(FEED, key);
    const flipped = Buffer.from(signed);
    flipped[10]! ^= 1;
    expect(await feedSignatureProblem(flipped, key.publicKey)).toMatch(/does not verify over the 100 bytes/);
    expect(await feedSignatureProblem(Buffer.from(signed.toString().replace("length: 100", "length: 99")), key.publicKey)).toMatch(/says length 99, but 100 bytes/);
    expect(await feedSignatureProblem(signed, parseSigningKey(randomBytes(32).toString("base64"), "other").publicKey)).toMatch(/does not verify/);
    expect(await feedSignatureProblem(Buffer.from(signed.toString().replace(/edSignature: \S+/, "edSignature: AAAA")), key.publicKey)).toMatch(/not the base64 of a 64-byte/);
    expect(await feedSignatureProblem(FEED, key.publicKey)).toMatch(/no signature block/);
  });
});
