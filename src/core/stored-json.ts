import type { z } from "zod";

/**
 * Bytes read from a store, parsed as JSON and checked against `schema`;
 * undefined when they are not JSON or do not match (the caller names the
 * object and the fix: stored data is never trusted as it is).
 */
export function parseStoredJson<T extends z.ZodType>(bytes: Buffer, schema: T): z.infer<T> | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString("utf8"));
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}
