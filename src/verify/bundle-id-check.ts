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
