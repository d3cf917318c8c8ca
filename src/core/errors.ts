/**
 * One error type for everything a user can cause or meet. The CLI maps each
 * code to an exit code in one place (EXIT_CODES) and prints `message` and
 * `hint`; stack traces only with --debug.
 */
export const EXIT_CODES = {
  E_USAGE: 2,
  E_CONFIG: 3,
  E_INPUT: 4,
  E_VERSION: 5,
  E_KEY: 6,
  E_PLIST: 7,
  E_CONFLICT: 8,
  E_STORE: 9,
  E_SIGNATURE: 10,
  E_VERIFY: 11,
  E_CATALOG: 12,
  E_NETWORK: 13,
  E_INTERNAL: 70,
} as const;

export type ErrorCode = keyof typeof EXIT_CODES;

export class RelcastError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, hint?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RelcastError";
    this.code = code;
    this.hint = hint;
  }

  get exitCode(): number {
    return EXIT_CODES[this.code];
  }
}

export function isRelcastError(err: unknown): err is RelcastError {
  return err instanceof RelcastError;
}

/** Thrown by stores when a conditional write loses (HTTP 412/409 on S3). */
export class PreconditionFailedError extends Error {
  constructor(readonly key: string, readonly condition: "if-match" | "if-none-match") {
    super(`precondition ${condition} failed for ${key}`);
    this.name = "PreconditionFailedError";
  }
}

/**
 * Thrown by a store's copy when the object it copies from is no longer the
 * version the copy began with (overwritten or removed meanwhile): the copy
 * is stopped and nothing is written, rather than joining the parts of two
 * versions or copying bytes the caller never looked at.
 */
export class SourceChangedError extends RelcastError {
  constructor(readonly from: string, readonly to: string, detail: string) {
    super("E_STORE", `the copy of ${from} to ${to} was stopped: ${detail}; nothing was written to ${to}`, "another run changed the store while this one copied from it; run the command again");
    this.name = "SourceChangedError";
  }
}
