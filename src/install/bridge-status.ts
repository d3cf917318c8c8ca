import { request } from "node:http";
import { RelcastError } from "../core/errors.js";

/** The installed plugin's local bridge (spec §4.8): loopback only, port 8765. */
export const BRIDGE_PORT = 8765;
export const BRIDGE_STATUS_PATH = "/v1/status";
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);
const MAX_BODY_BYTES = 64 * 1024;

export interface BridgeAnswer {
  url: string;
  status: number;
  contentType: string;
  body: string;
  truncated: boolean;
}

export type BridgeCheck = { running: true; answer: BridgeAnswer } | { running: false; url: string; reason: string };

/** The bridge listens on the user's own machine; anything else is a mistake, not a check. */
export function requireLoopback(host: string): string {
  if (!LOOPBACK_HOSTS.has(host)) {
    throw new RelcastError("E_USAGE", `--host ${host} is not a loopback address; the bridge listens only on the user's own machine`, "use --host 127.0.0.1 (the default), localhost or ::1");
  }
  return host.replace(/^\[|\]$/g, "");
}

/**
 * GET /v1/status with a short timeout. "Not running" (refused, reset, no
 * answer in time) is a result, not an exception; the body is capped so a
 * misbehaving process cannot flood the terminal.
 */
export function checkBridge(host: string, port: number, timeoutMs = 3000): Promise<BridgeCheck> {
  const hostname = requireLoopback(host);
  const url = `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}${BRIDGE_STATUS_PATH}`;
  return new Promise((resolve) => {
    const req = request({ hostname, port, path: BRIDGE_STATUS_PATH, method: "GET", headers: { accept: "application/json" }, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      res.on("data", (chunk: Buffer) => {
        if (size >= MAX_BODY_BYTES) {
          truncated = true;
          res.destroy();
          return;
        }
        chunks.push(chunk.subarray(0, MAX_BODY_BYTES - size));
        size += chunk.length;
        if (size > MAX_BODY_BYTES) truncated = true;
      });
      const finish = () => resolve({
        running: true,
        answer: { url, status: res.statusCode ?? 0, contentType: String(res.headers["content-type"] ?? ""), body: Buffer.concat(chunks).toString("utf8"), truncated },
      });
      res.on("end", finish);
      res.on("close", finish);
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", (err: NodeJS.ErrnoException) => resolve({ running: false, url, reason: err.code ?? err.message }));
    req.end();
  });
}

/** The body as a person wants to read it: pretty JSON when it is JSON. */
export function formatBridgeBody(answer: BridgeAnswer): string {
  let text = answer.body;
  try {
    text = JSON.stringify(JSON.parse(answer.body), null, 2);
  } catch {
    // not JSON: shown as sent
  }
  return answer.truncated ? `${text}\n… (cut at ${MAX_BODY_BYTES} bytes)` : text;
}
