import { signEd25519, verifyEd25519 } from "./ed25519-stream.js";
import type { ExpandedKey } from "./ed25519-stream.js";

/**
 * Sparkle 2.9's signed appcast (SURequireSignedFeed): an XML comment at the
 * end of the feed holding the Ed25519 signature of every byte before it.
 * Read as Sparkle's SPUExtractSignedFeed.m finds it (the LAST prefix, with a
 * bare LF; the block runs to the first `-->` after it and must be UTF-8;
 * lines starting exactly `edSignature:` / `length:`, values trimmed) and
 * written as sign_update writes it (common_cli/Signing.swift), right after
 * the content.
 */
export const FEED_SIGNATURE_PREFIX = "<!-- sparkle-signatures:\n";
const PREFIX = Buffer.from(FEED_SIGNATURE_PREFIX);
const SUFFIX = Buffer.from("-->");
const CRLF_PREFIX = Buffer.from("<!-- sparkle-signatures:\r\n");

export interface FeedSignatureBlock {
  /** The `edSignature:` value, trimmed; undefined when the block has no such line. */
  edSignature: string | undefined;
  /** The `length:` value as Sparkle reads it (longLongValue: leading digits, else 0). */
  length: number;
}

export interface SplitFeed {
  /** The signed bytes: everything before the block (the whole file when there is no block). */
  content: Buffer;
  block: FeedSignatureBlock | undefined;
}

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true });

/** Splits a feed into its signed content and its signature block, exactly where Sparkle splits it. */
export function splitSignedFeed(bytes: Buffer): SplitFeed {
  const at = bytes.lastIndexOf(PREFIX);
  if (at === -1) return { content: bytes, block: undefined };
  const end = bytes.indexOf(SUFFIX, at + PREFIX.length);
  if (end === -1) return { content: bytes, block: undefined };
  let text: string;
  try {
    text = fatalUtf8.decode(bytes.subarray(at + PREFIX.length, end));
  } catch {
    return { content: bytes, block: undefined };
  }
  let edSignature: string | undefined;
  let length = 0;
  for (const line of text.split(/\r\n|\n|\r/)) {
    if (line.startsWith("edSignature:")) edSignature = line.slice("edSignature:".length).trim();
    else if (line.startsWith("length:")) length = Number(/^[+-]?\d+/.exec(line.slice("length:".length).trim())?.[0] ?? 0);
  }
  return { content: bytes.subarray(0, at), block: { edSignature, length } };
}

/** The block sign_update appends: `<!-- sparkle-signatures:\nedSignature: …\nlength: …\n-->\n`. */
export function feedSignatureBlock(signature: Buffer, length: number): string {
  return `${FEED_SIGNATURE_PREFIX}edSignature: ${signature.toString("base64")}\nlength: ${length}\n-->\n`;
}

/** Whether a block written with CRLF line ends is there (Sparkle never finds it: its prefix needs a bare LF). */
export function hasCrlfSignatureBlock(bytes: Buffer): boolean {
  return bytes.includes(CRLF_PREFIX);
}

/** Signs a feed as `sign_update feed.xml` does: an old block is dropped, the content signed, the new block appended. */
export async function signFeed(bytes: Buffer, key: ExpandedKey): Promise<Buffer> {
  const { content } = splitSignedFeed(bytes);
  const signature = await signEd25519(key, content);
  return Buffer.concat([content, Buffer.from(feedSignatureBlock(signature, content.length))]);
}

const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Why a signed feed would be refused by an app with this public key, or
 * undefined when its block verifies. A length that differs from the signed
 * bytes is reported too (Sparkle does not enforce it, but relcast and
 * sign_update always write the exact count, so it means an edit).
 */
export async function feedSignatureProblem(bytes: Buffer, publicKey: Uint8Array): Promise<string | undefined> {
  const { content, block } = splitSignedFeed(bytes);
  if (!block) {
    return hasCrlfSignatureBlock(bytes)
      ? "its signature block has CRLF line ends; Sparkle looks for \"<!-- sparkle-signatures:\" and a bare LF and finds no signature"
      : "it has no signature block (<!-- sparkle-signatures: … --> at the end)";
  }
  if (block.edSignature === undefined) return "its signature block has no edSignature line";
  const sig = STRICT_BASE64.test(block.edSignature) ? Buffer.from(block.edSignature, "base64") : undefined;
  if (sig?.length !== 64) return `its edSignature "${block.edSignature.slice(0, 20)}…" is not the base64 of a 64-byte signature`;
  if (!(await verifyEd25519(publicKey, sig, content))) {
    return `its edSignature does not verify over the ${content.length} bytes before the block with the public key ${Buffer.from(publicKey).toString("base64")}`;
  }
  if (block.length !== content.length) return `its signature block says length ${block.length}, but ${content.length} bytes come before it`;
  return undefined;
}
