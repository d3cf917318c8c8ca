/** Parses $GITHUB_OUTPUT the way the runner does: `name=value` or `name<<DELIM` … `DELIM`. */
export function parseGithubOutput(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2]!, i + 1);
      if (end < 0) throw new Error(`unterminated output ${heredoc[1]}`);
      out[heredoc[1]!] = lines.slice(i + 1, end).join("\n");
      i = end;
      continue;
    }
    const eq = line.indexOf("=");
    if (eq < 1) throw new Error(`not an output line: ${line}`);
    out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

/** The environment name the runner gives an input: upper-cased, spaces (not hyphens) to underscores. */
export function inputVariable(name: string): string {
  return `INPUT_${name.replace(/ /g, "_").toUpperCase()}`;
}
