/**
 * Channel names are compared byte for byte by Sparkle (`<sparkle:channel>`)
 * and by relcast's per-channel rules (build order, appcast limits), so
 * `Stable` beside `stable` would be a second channel that no installed copy
 * follows. A name that differs from an existing one only in case is a typo.
 */
export function caseTwinOf(channel: string, existing: Iterable<string>): string | undefined {
  const folded = channel.toLowerCase();
  let twin: string | undefined;
  for (const name of existing) {
    if (name === channel) return undefined;
    if (twin === undefined && name.toLowerCase() === folded) twin = name;
  }
  return twin;
}
