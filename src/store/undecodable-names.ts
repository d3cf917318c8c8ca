import { readdir } from "node:fs/promises";

const utf8 = new TextDecoder("utf-8", { fatal: true });

function isUtf8(name: Buffer): boolean {
  try {
    utf8.decode(name);
    return true;
  } catch {
    return false;
  }
}

/** A name as printable ASCII: each other byte as `\xNN` (the name is not text, so no character is guessed). */
function shownBytes(name: Buffer): string {
  let out = "";
  for (const b of name) out += b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, "0")}`;
  return out;
}

/**
 * Every entry below `root` whose name is not UTF-8, as its path from the
 * root (folders shown by name, the odd one by its bytes). A name Node reads
 * as UTF-8 would come back with U+FFFD in it and match no file, so the
 * folder store's listing never sees these: the folders are read with their
 * names as bytes. Links are never entered (the entries are lstat-based), and
 * a folder with such a name is reported, not entered.
 */
export async function undecodableNamesBelow(root: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: Buffer, shown: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true, encoding: "buffer" });
    } catch (err) {
      if (["ENOENT", "ENOTDIR"].includes((err as NodeJS.ErrnoException).code ?? "")) return;
      throw err;
    }
    for (const entry of entries) {
      const name = entry.name as unknown as Buffer;
      if (!isUtf8(name)) found.push(`${shown}${shownBytes(name)}${entry.isDirectory() ? "/" : ""}`);
      else if (entry.isDirectory()) await walk(Buffer.concat([dir, Buffer.from("/"), name]), `${shown}${name.toString("utf8")}/`);
    }
  };
  await walk(Buffer.from(root), "");
  return found.sort();
}
