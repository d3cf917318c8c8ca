import type { Command } from "commander";
import { registerGateway } from "./gateway.js";
import { registerHmac } from "./hmac.js";

/**
 * Every `relcast <command>` is one file in this folder exporting a
 * `register<Name>(program)` function; this list is the whole CLI.
 */
export const commandRegistrations: Array<(program: Command) => void> = [
  registerHmac,
  registerGateway,
];
