/**
 * The little the token store needs from a database, so one set of rules
 * (token-store.ts) runs on SQLite and on PostgreSQL. SQL is written once
 * with `?` placeholders and double-quoted aliases, which both accept; the
 * PostgreSQL driver numbers the placeholders. `lockRows` is ` FOR UPDATE`
 * where row locks exist (PostgreSQL) and empty where a transaction already
 * holds the whole database (SQLite, BEGIN IMMEDIATE).
 */
export type SqlValue = string | number | Buffer | null;
export type Row = Record<string, unknown>;

export interface SqlRunner {
  all(sql: string, params?: readonly SqlValue[]): Promise<Row[]>;
  /** Runs a write; resolves to the number of rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
}

export interface SqlDriver extends SqlRunner {
  readonly dialect: "sqlite" | "postgres";
  readonly lockRows: string;
  /** What to show in logs: the file, or the URL without its password. */
  readonly description: string;
  /** Runs `fn` in one transaction that serialises with every other writer, in this process and in others. */
  transaction<T>(fn: (tx: SqlRunner) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Runs async jobs one at a time, in call order. */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(job: () => Promise<T>): Promise<T> {
    const result = this.tail.then(job);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
