import { createLogger, type Logger } from "../core/logger.js";
import { maskSecrets } from "../core/secrets.js";
import { escapeData, inGitHubActions, writeWorkflowCommand } from "./github-actions.js";

/** Plain stderr lines, or GitHub Actions groups and annotations when run there. */
export function cliLogger(options: { quiet: boolean; debug: boolean }): Logger {
  const base = createLogger(options);
  if (!inGitHubActions()) return base;
  const write = (line: string) => writeWorkflowCommand(maskSecrets(line));
  return {
    ...base,
    warn: (m) => write(`::warning::${escapeData(m)}`),
    async group(title, fn) {
      write(`::group::${escapeData(title)}`);
      try {
        return await fn();
      } finally {
        write("::endgroup::");
      }
    },
  };
}
