// A pass-through HTTP proxy in front of moto_server that notes, for each multipart upload, when its
// CreateMultipartUpload request arrived and when its CompleteMultipartUpload answer ended: the upload as
// the store sees it, without either client's process start-up (node's or the aws cli's Python).
// usage: node store-clock-proxy.mjs <target endpoint> <log file>   prints "port <n>" once listening.
// Log lines: {"event":"create"|"complete","path":"/bucket/key","t":<ms since the epoch, sub-ms>}
import { appendFileSync } from "node:fs";
import http from "node:http";

const [target, logFile] = process.argv.slice(2);
const upstream = new URL(target);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const now = () => performance.timeOrigin + performance.now();
const note = (event, path) => appendFileSync(logFile, JSON.stringify({ event, path, t: now() }) + "\n");

const server = http.createServer((req, res) => {
  const url = new URL(req.url, "http://proxy");
  const create = req.method === "POST" && url.searchParams.has("uploads");
  const complete = req.method === "POST" && url.searchParams.has("uploadId");
  if (create) note("create", url.pathname);
  const up = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
    if (complete) answer.on("end", () => note("complete", url.pathname));
  });
  up.on("error", () => res.destroy());
  req.pipe(up);
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`port ${server.address().port}\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
