import type { z } from "zod";
import { closestName } from "./closest-name.js";

/** Turns zod issues into one line per problem: `<file>: field "a.b": <what is wrong>`. */
function valueAt(raw: unknown, path: PropertyKey[]): unknown {
  let node = raw;
  for (const key of path) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

/** The definition zod keeps on every schema (zod 4): its kind and what it wraps. */
interface SchemaDef { type: string; shape?: Record<string, unknown>; innerType?: unknown; in?: unknown; element?: unknown; options?: unknown[] }

function defOf(schema: unknown): SchemaDef | undefined {
  return (schema as { _zod?: { def?: SchemaDef } } | undefined)?._zod?.def;
}

/** The field names an object schema at `path` accepts, looking through optional, default, pipes, arrays and unions. */
function knownKeysAt(schema: unknown, path: PropertyKey[]): string[] {
  const def = defOf(schema);
  if (!def) return [];
  if (def.innerType !== undefined) return knownKeysAt(def.innerType, path);
  if (def.type === "pipe") return knownKeysAt(def.in, path);
  if (def.type === "union") return [...new Set((def.options ?? []).flatMap((o) => knownKeysAt(o, path)))];
  if (path.length === 0) return def.type === "object" ? Object.keys(def.shape ?? {}) : [];
  const [head, ...rest] = path;
  if (def.type === "array" && typeof head === "number") return knownKeysAt(def.element, rest);
  if (def.type === "object" && typeof head === "string") return knownKeysAt(def.shape?.[head], rest);
  return [];
}

/**
 * One line per problem. With the schema, an unknown field names the field
 * it was probably meant to be ("displyName": did you mean "displayName"?).
 */
export function describeZodIssues(error: z.ZodError, source: string, raw?: unknown, schema?: z.ZodType): string {
  return error.issues
    .map((issue) => {
      if (issue.code === "unrecognized_keys") {
        const where = issue.path.length ? ` in "${issue.path.join(".")}"` : "";
        const known = schema ? knownKeysAt(schema, issue.path) : [];
        const named = issue.keys.map((k) => {
          const meant = closestName(k, known);
          return meant ? `"${k}" (did you mean "${meant}"?)` : `"${k}"`;
        });
        return `${source}: unknown field${issue.keys.length > 1 ? "s" : ""} ${named.join(", ")}${where}`;
      }
      const field = issue.path.length ? `field "${issue.path.join(".")}"` : "value";
      const missing = (raw !== undefined && issue.path.length > 0 && valueAt(raw, issue.path) === undefined) || /received undefined/.test(issue.message);
      return `${source}: ${field} ${missing ? "is missing" : issue.message.replace(/^Invalid input: /, "")}`;
    })
    .join("\n");
}
