import { execFileSync } from "node:child_process";

/**
 * Runs a Python 3 snippet with a JSON value on stdin and returns its JSON
 * output: the independent implementation the HMAC tests compare against.
 */
export function runPython<T>(script: string, input: unknown): T {
  const out = execFileSync("python3", ["-c", script], { input: JSON.stringify(input), encoding: "utf8" });
  return JSON.parse(out) as T;
}

/** Python signer: HMAC-SHA256 over the spec §5.2 signing string, plus the Digest. */
export const PYTHON_SIGNER = `
import sys, json, hmac, hashlib, base64
out = []
for c in json.load(sys.stdin):
    s = ("date: " + c["date"] + "\\n" + c["method"] + " " + c["target"] + " HTTP/1.1").encode("utf-8")
    sig = base64.b64encode(hmac.new(c["secret"].encode("utf-8"), s, hashlib.sha256).digest()).decode()
    body = c.get("body")
    dig = None if body is None else "SHA-256=" + base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode()
    out.append({"signature": sig, "digest": dig})
print(json.dumps(out))
`;
