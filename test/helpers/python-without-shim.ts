import { execFileSync } from "node:child_process";
import { accessSync, constants, realpathSync } from "node:fs";
import path from "node:path";

/**
 * Runs `python3` (and the tools installed beside it, such as the aws cli)
 * without a version manager's shim in between, for this test file and every
 * process it starts. On a machine with pyenv, `python3` on PATH is a bash
 * script that runs `pyenv exec`: measured 0.8 s of CPU per call on the 2-core
 * machine against 0.2 s for the interpreter itself, and the tests start it
 * for every independent read (expat, html.parser, cryptography, moto).
 *
 * Asks `python3` once which interpreter it is (sys.executable); when that is
 * not the file PATH finds (a shim), its folder goes first on PATH. The
 * interpreter, its version and its packages are the ones the shim would have
 * run; without a shim nothing changes. Import it before anything that starts
 * Python at load time (the moto probe). Named as a vitest globalSetup file it
 * does this once for the whole run (workers inherit the main process's PATH),
 * and a file's own import then finds the interpreter first and changes nothing.
 */
function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

export function skipPythonShim(): void {
  const found = onPath("python3");
  if (!found) return;
  let executable: string;
  try {
    executable = execFileSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8", timeout: 60_000 }).trim();
  } catch {
    return; // no runnable python3: the tests that need it say so themselves
  }
  try {
    if (!path.isAbsolute(executable) || realpathSync(found) === realpathSync(executable)) return;
  } catch {
    return;
  }
  process.env.PATH = `${path.dirname(executable)}${path.delimiter}${process.env.PATH}`;
}

skipPythonShim();

/** As a vitest globalSetup: the import above already did it, in the main process. */
export default function setup(): void {}
