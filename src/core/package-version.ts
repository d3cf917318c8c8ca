import { readFileSync } from "node:fs";
import path from "node:path";
import { packageRoot } from "./package-root.js";

/** relcast's own version, from its package.json. */
export function packageVersion(): string {
  const text = readFileSync(path.join(packageRoot(), "package.json"), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}

/** Where to report a relcast bug: package.json's `bugs.url`, read when needed (an error path must not fail on it). */
export function issueTrackerUrl(): string {
  try {
    const pkg = JSON.parse(readFileSync(path.join(packageRoot(), "package.json"), "utf8")) as { bugs?: { url?: string } };
    return pkg.bugs?.url ?? "the project's issue tracker";
  } catch {
    return "the project's issue tracker";
  }
}
