import type { Logger } from "../core/logger.js";

export interface HeldLogger extends Logger {
  /** Prints what was held, in order and in its groups, then passes every later line straight through. */
  release(): Promise<void>;
  /** Drops what was held; later lines are dropped too. */
  discard(): void;
}

type Entry = { line: (to: Logger) => void } | { title: string; entries: Entry[] };

/**
 * A logger that holds its lines until the run knows whether they matter:
 * `relcast publish` holds the checks of a version that is already in the
 * store until the plan says whether anything is left to do. An identical
 * re-run then prints one line instead of every step it re-checked; any
 * other run prints everything, in order, each line in its step's group.
 */
export function heldLogger(base: Logger): HeldLogger {
  let mode: "hold" | "pass" | "drop" = "hold";
  const root: Entry[] = [];
  let current = root;
  const put = (line: (to: Logger) => void) => {
    if (mode === "pass") line(base);
    else if (mode === "hold") current.push({ line });
  };
  async function replay(entries: Entry[]): Promise<void> {
    for (const e of entries) {
      if ("line" in e) e.line(base);
      else await base.group(e.title, () => replay(e.entries));
    }
  }
  return {
    info: (m) => put((to) => to.info(m)),
    warn: (m) => put((to) => to.warn(m)),
    error: (m) => put((to) => to.error(m)),
    debug: (m) => put((to) => to.debug(m)),
    async group(title, fn) {
      if (mode !== "hold") return mode === "pass" ? base.group(title, fn) : fn();
      const group = { title, entries: [] as Entry[] };
      const outer = current;
      outer.push(group);
      current = group.entries;
      try {
        return await fn();
      } finally {
        current = outer;
      }
    },
    async release() {
      if (mode !== "hold") return;
      mode = "pass";
      await replay(root.splice(0));
    },
    discard() {
      mode = "drop";
      root.length = 0;
    },
  };
}
