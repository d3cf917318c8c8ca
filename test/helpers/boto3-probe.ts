import { spawn } from "node:child_process";
import readline from "node:readline";

/**
 * An independent S3 client for checks: Python's boto3 (botocore, the library
 * the aws cli is made of), started once per test file and asked over stdin,
 * one JSON line per call. The aws cli gave the same answers, but started a
 * Python and imported all of botocore for every single check (about a second
 * each on a loaded machine).
 *
 * `call("head_object", { Bucket, Key })` is boto3's `client.head_object(...)`;
 * the answer is boto3's, without ResponseMetadata, dates as ISO strings. An
 * error the call raised rejects with its class name and message.
 */
const SCRIPT = `
import datetime, json, sys
import boto3
from botocore.config import Config

client = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                      aws_access_key_id="test", aws_secret_access_key="test",
                      config=Config(s3={"addressing_style": "path"}))

def plain(value):
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("latin1")
    raise TypeError(type(value).__name__)

for line in sys.stdin:
    request = json.loads(line)
    try:
        answer = getattr(client, request["op"])(**request["args"])
        answer.pop("ResponseMetadata", None)
        print(json.dumps({"ok": answer}, default=plain), flush=True)
    except Exception as err:
        print(json.dumps({"error": "%s: %s" % (type(err).__name__, err)}), flush=True)
`;

export interface S3Probe {
  call<T = Record<string, unknown>>(op: string, args: Record<string, unknown>): Promise<T>;
  close(): Promise<void>;
}

export function startS3Probe(endpoint: string): S3Probe {
  const child = spawn("python3", ["-c", SCRIPT, endpoint], { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  // Python answers in the order it was asked: the oldest waiting call gets the next line.
  const waiting: Array<{ resolve: (v: unknown) => void; reject: (e: Error) => void }> = [];
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    const next = waiting.shift();
    if (!next) return;
    const answer = JSON.parse(line) as { ok?: unknown; error?: string };
    if (answer.error !== undefined) next.reject(new Error(`boto3: ${answer.error}`));
    else next.resolve(answer.ok);
  });
  child.stdin.on("error", () => undefined); // a write to a probe that died: its waiting call is rejected below
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", (err) => {
      stderr += err.message;
      resolve();
    });
  });
  void exited.then(() => {
    for (const w of waiting.splice(0)) w.reject(new Error(`the boto3 probe exited: ${stderr}`));
  });
  return {
    call<T>(op: string, args: Record<string, unknown>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        waiting.push({ resolve: resolve as (v: unknown) => void, reject });
        child.stdin.write(`${JSON.stringify({ op, args })}\n`);
      });
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin.end();
      const timer = setTimeout(() => child.pid !== undefined && child.exitCode === null && process.kill(child.pid, "SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
