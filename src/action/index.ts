import { runAction } from "./main.js";

process.exitCode = await runAction();
