import { printable } from "./printable.js";
import { maskSecrets } from "./secrets.js";

/**
 * Human progress goes to stderr so stdout stays machine-readable (--json).
 * All text is masked and made printable (printable.ts). A GitHub Actions flavour (groups, annotations) can be
 * swapped in by the CLI.
 */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug(message: string): void;
  group<T>(title: string, fn: () => Promise<T>): Promise<T>;
}

export interface LoggerOptions {
  quiet?: boolean;
  debug?: boolean;
  write?: (line: string) => void;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(line + "\n"));
  // Messages carry names read from stores and files: no control or format character reaches the terminal raw.
  const out = (line: string) => write(printable(maskSecrets(line), { keepNewlines: true }));
  return {
    info: (m) => { if (!options.quiet) out(m); },
    warn: (m) => out(`warning: ${m}`),
    error: (m) => out(`error: ${m}`),
    debug: (m) => { if (options.debug) out(`debug: ${m}`); },
    async group(title, fn) {
      if (!options.quiet) out(`» ${title}`);
      return fn();
    },
  };
}

export const silentLogger: Logger = {
  info() {}, warn() {}, error() {}, debug() {},
  group: (_t, fn) => fn(),
};
