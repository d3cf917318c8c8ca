import type { z } from "zod";

/** Turns zod issues into one line per problem: `<file>: field "a.b": <what is wrong>`. */
export function describeZodIssues(error: z.ZodError, source: string): string {
  return error.issues
    .map((issue) => {
      if (issue.code === "unrecognized_keys") {
        const where = issue.path.length ? ` in "${issue.path.join(".")}"` : "";
        return `${source}: unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")}${where}`;
      }
      const field = issue.path.length ? `field "${issue.path.join(".")}"` : "value";
      const missing = issue.code === "invalid_type" && /received undefined/.test(issue.message);
      return `${source}: ${field} ${missing ? "is missing" : issue.message.replace(/^Invalid input: /, "")}`;
    })
    .join("\n");
}
