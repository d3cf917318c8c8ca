#!/usr/bin/env node
// Builds the sample plugin from the command line; the release workflow uses
// it as the stand-in for a real Xcode build. Prints the paths as
// `app=`, `dmg=` and `notes=` lines (append them to $GITHUB_OUTPUT).
//   node scripts/build-sample-plugin.mjs --version 1.2.0 --build 120 --out build [--public-key <b64>]
import { parseArgs } from "node:util";
import { makeSamplePlugin } from "./sample-plugin.mjs";

const { values } = parseArgs({
  options: {
    version: { type: "string" },
    build: { type: "string" },
    out: { type: "string", default: "build" },
    "public-key": { type: "string" },
  },
});
if (!values.version || !values.build || !/^\d+$/.test(values.build)) {
  console.error("usage: build-sample-plugin.mjs --version <x.y.z> --build <integer> [--out <dir>] [--public-key <base64>]");
  process.exit(2);
}
const built = await makeSamplePlugin({
  dir: values.out,
  version: values.version,
  build: Number(values.build),
  ...(values["public-key"] ? { publicKey: values["public-key"] } : {}),
});
for (const [name, file] of Object.entries(built)) console.log(`${name}=${file}`);
