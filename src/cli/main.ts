#!/usr/bin/env node
import { commandRegistrations } from "./commands/index.js";
import { createProgram, runProgram } from "./program.js";

/** Entry point of the `relcast` binary: loads only the command being run (see commands/index.ts). */
export async function main(argv: string[]): Promise<number> {
  return runProgram(createProgram(await commandRegistrations(argv)), argv);
}

process.exitCode = await main(process.argv);
