import type { z } from "zod";

/** Turns zod issues into one line per problem: `<file>: field "a.b": <what is wrong>`. */
function valueAt(raw: unknown, path: PropertyKey[]): unknown {
  let node = raw;
  for (const key of path) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

export function describeZodIssues(error: z.ZodError, source: string, raw?: unknown): string {
  return error.issues
    .map((issue) => {
      if (issue.code === "unrecognized_keys") {
        const where = issue.path.length ? ` in "${issue.path.join(".")}"` : "";
        return `${source}: unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")}${where}`;
      }
      const field = issue.path.length ? `field "${issue.path.join(".")}"` : "value";
      const missing = (raw !== undefined && issue.path.length > 0 && valueAt(raw, issue.path) === undefined) || /received undefined/.test(issue.message);
      return `${source}: ${field} ${missing ? "is missing" : issue.message.replace(/^Invalid input: /, "")}`;
    })
    .join("\n");
}
