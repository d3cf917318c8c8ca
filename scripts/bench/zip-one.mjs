// Zips one bundle with relcast's writer (the publish pipeline's zip step), for the zip benchmark.
// usage: node zip-one.mjs <bundle dir> <out.zip>
import { zipBundle } from "../../dist/src/steps/zip/reproducible-zip.js";

const [bundle, out] = process.argv.slice(2);
const result = await zipBundle(bundle, out);
process.stdout.write(`${result.sha256} ${result.sizeBytes} ${result.entryCount}\n`);
