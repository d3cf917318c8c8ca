/** The digests of one object as read, and the file it was read from. */
interface ReadDigests {
  sameFile: string;
  sizeBytes: number;
  sha256: string;
}

/**
 * What one verify run has read and hashed, by key, with the store's word for
 * the file it read (`OpenedObject.sameFile`: the folder store's device and
 * inode, size and times). A folder store's public copies (downloads/,
 * releases/latest/) are hard links to the release's objects: when a copy is
 * that very file, unchanged, its bytes are the ones already hashed, so it
 * is checked by those digests instead of being read a second time. A store
 * that cannot say (S3) has every object read.
 */
export class ReadMemo {
  private readonly byKey = new Map<string, ReadDigests>();

  remember(key: string, read: ReadDigests): void {
    this.byKey.set(key, read);
  }

  /** The digests of the first of `keys` read from this same file, if any. */
  recall(keys: readonly string[], sameFile: string): ReadDigests | undefined {
    for (const key of keys) {
      const read = this.byKey.get(key);
      if (read?.sameFile === sameFile) return read;
    }
    return undefined;
  }
}
