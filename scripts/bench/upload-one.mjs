// Uploads one file with relcast's S3 store as publish uploads its disk image: staged (the parts sent
// ahead, store.stage), then completed by the put, create-only. For the upload benchmark.
// usage: node upload-one.mjs <endpoint> <bucket> <key> <file>
import { openStore } from "../../dist/src/store/open-store.js";

const [endpoint, bucket, key, file] = process.argv.slice(2);
const store = await openStore(`s3://${bucket}`, process.cwd(), { s3: { endpoint, forcePathStyle: true, region: "us-east-1" } });
const options = { contentType: "application/octet-stream", cacheControl: "no-cache" };
store.stage?.(key, file, options);
const { etag } = await store.put(key, { file }, { ...options, ifNoneMatch: "*" });
await store.close?.();
process.stdout.write(`${etag}\n`);
