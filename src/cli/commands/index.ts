import type { Command } from "commander";
import { registerGateway } from "./gateway.js";
import { registerGc } from "./gc.js";
import { registerHmac } from "./hmac.js";
import { registerKeys } from "./keys.js";
import { registerPublish } from "./publish.js";
import { registerRebuild } from "./rebuild.js";
import { registerServe } from "./serve.js";
import { registerSign } from "./sign.js";
import { registerSite } from "./site.js";
import { registerVerify } from "./verify.js";
import { registerVerifyInstall } from "./verify-install.js";
import { registerYank } from "./yank.js";

/**
 * Every `relcast <command>` is one file in this folder exporting a
 * `register<Name>(program)` function; this list is the whole CLI.
 */
export const commandRegistrations: Array<(program: Command) => void> = [
  registerPublish,
  registerRebuild,
  registerVerify,
  registerYank,
  registerKeys,
  registerSign,
  registerSite,
  registerServe,
  registerGc,
  registerHmac,
  registerGateway,
  registerVerifyInstall,
];
