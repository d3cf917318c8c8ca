/**
 * Sparkle installs an update only when its CFBundleIdentifier is the
 * installed copy's. Releases whose identifier differs from the one most
 * releases carry are named.
 */
export function bundleIdProblems(byVersion: ReadonlyMap<string, string | undefined>): Array<[string, string]> {
  const counts = new Map<string, number>();
  for (const id of byVersion.values()) if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
  if (counts.size <= 1) return [];
  const common = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
  return [...byVersion.entries()].flatMap(([version, id]) =>
    id && id !== common ? [[version, `Info.plist CFBundleIdentifier is ${id}; the other releases are ${common}, so Sparkle would refuse to install it`] as [string, string]] : []);
}

/**
 * An installed copy checks an update with the SUPublicEDKey it has: each
 * release (by build) whose bundle's key differs from the release before it
 * is named, unless it was published with --allow-key-change (the record's
 * `keyChangeAllowed`).
 */
export function keyChangeProblems(releases: ReadonlyArray<{ version: string; build: number; publicEdKey: string | undefined; keyChangeAllowed: boolean }>): Array<[string, string]> {
  const ordered = releases.filter((r) => r.publicEdKey !== undefined).sort((a, b) => a.build - b.build);
  const found: Array<[string, string]> = [];
  for (let i = 1; i < ordered.length; i++) {
    const [before, after] = [ordered[i - 1]!, ordered[i]!];
    if (before.publicEdKey === after.publicEdKey || after.keyChangeAllowed) continue;
    found.push([after.version, `Info.plist SUPublicEDKey is ${after.publicEdKey}, but ${before.version} (the build before) carries ${before.publicEdKey}: its installed copies would reject this update (publish key changes with --allow-key-change)`]);
  }
  return found;
}
