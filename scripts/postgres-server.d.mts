export interface PostgresServer {
  port: number;
  pid: number;
  /** A URL for a new, empty database on this server. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}
export function postgresBinDir(): string | undefined;
export function startPostgresServer(): Promise<PostgresServer>;
