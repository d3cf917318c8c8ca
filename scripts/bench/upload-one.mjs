// Uploads one file with relcast's S3 store (multipart, parallel parts, as publish does), for the upload benchmark.
// usage: node upload-one.mjs <endpoint> <bucket> <key> <file>
import { openStore } from "../../dist/src/store/open-store.js";

const [endpoint, bucket, key, file] = process.argv.slice(2);
const store = await openStore(`s3://${bucket}`, process.cwd(), { s3: { endpoint, forcePathStyle: true, region: "us-east-1" } });
const { etag } = await store.put(key, { file }, { contentType: "application/octet-stream", cacheControl: "no-cache" });
process.stdout.write(`${etag}\n`);
