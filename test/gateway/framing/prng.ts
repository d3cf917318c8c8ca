/**
 * A small seeded PRNG (mulberry32) for the framing property test: the same
 * seed gives the same requests, so a failure printed with its seed can be
 * run again (RELCAST_FRAMING_SEED).
 */
export class Prng {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** One of `entries`, each `[weight, value]`. */
  weighted<T>(entries: readonly (readonly [number, T])[]): T {
    const total = entries.reduce((s, [w]) => s + w, 0);
    let r = this.next() * total;
    for (const [w, v] of entries) {
      if (r < w) return v;
      r -= w;
    }
    return entries[entries.length - 1]![1];
  }

  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }

  /** `name` in a random ASCII case: lower, upper, Title-Case or mixed per letter. */
  spell(name: string): string {
    switch (this.int(0, 3)) {
      case 0:
        return name.toLowerCase();
      case 1:
        return name.toUpperCase();
      case 2:
        return name.replace(/(^|[-_])([a-z])/g, (_m, sep: string, c: string) => sep + c.toUpperCase());
      default:
        return [...name].map((c) => (this.chance(0.5) ? c.toUpperCase() : c.toLowerCase())).join("");
    }
  }
}
