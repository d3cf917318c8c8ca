/**
 * Reads the gateway's answers on one connection, in order, from the raw
 * bytes (HTTP/1.1 message framing per RFC 9112 §6: no body for HEAD, 1xx,
 * 204 and 304; chunked; Content-Length; else up to the close). The method of
 * the request each answer belongs to comes from `methodOf`, by position.
 */
export interface Answer {
  status: number;
  headers: [string, string][];
  body: Buffer;
  head: string;
}

export function headerValue(answer: Answer, name: string): string | undefined {
  return answer.headers.find(([n]) => n.toLowerCase() === name)?.[1];
}

export class ResponseReader {
  readonly answers: Answer[] = [];
  /** Set when the bytes are not an HTTP/1.1 answer; nothing is read after that. */
  error: string | undefined;
  private buffer: Buffer = Buffer.alloc(0);
  /** The head of an answer whose body runs to the close of the connection. */
  private untilClose: Omit<Answer, "body"> | undefined;

  constructor(private readonly methodOf: (index: number) => string | undefined) {}

  push(chunk: Buffer): void {
    if (this.error) return;
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    while (!this.error && !this.untilClose && this.readOne());
  }

  /** The connection closed: an answer read up to the close ends here; any other partial answer is an error. */
  end(): void {
    if (this.error) return;
    if (this.untilClose) {
      this.answers.push({ ...this.untilClose, body: this.buffer });
      this.untilClose = undefined;
    } else if (this.buffer.length > 0) {
      this.error = `connection closed inside an answer: ${JSON.stringify(this.buffer.toString("latin1").slice(0, 300))}`;
    }
    this.buffer = Buffer.alloc(0);
  }

  private fail(message: string): false {
    this.error = `${message}: ${JSON.stringify(this.buffer.toString("latin1").slice(0, 300))}`;
    return false;
  }

  /** Reads one whole answer off the buffer; false when more bytes are needed (or on error). */
  private readOne(): boolean {
    if (this.buffer.length === 0) return false;
    const headEnd = this.buffer.indexOf("\r\n\r\n");
    if (headEnd < 0) return this.buffer.length > 64 * 1024 ? this.fail("answer head over 64 KiB") : false;
    const head = this.buffer.subarray(0, headEnd).toString("latin1");
    const [statusLine, ...lines] = head.split("\r\n");
    const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(statusLine!);
    if (!status) return this.fail("not an HTTP/1.1 status line");
    const headers: [string, string][] = [];
    for (const line of lines) {
      const colon = line.indexOf(":");
      if (colon <= 0) return this.fail(`malformed header line ${JSON.stringify(line)}`);
      headers.push([line.slice(0, colon), line.slice(colon + 1).trim()]);
    }
    const code = Number(status[1]);
    const partial = { status: code, headers, head };
    const rest = this.buffer.subarray(headEnd + 4);
    const find = (name: string) => headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
    if (code >= 100 && code < 200) {
      this.buffer = rest; // interim answer: the final one follows
      return true;
    }
    const method = this.methodOf(this.answers.length);
    if (method === "HEAD" || code === 204 || code === 304) {
      this.answers.push({ ...partial, body: Buffer.alloc(0) });
      this.buffer = rest;
      return true;
    }
    const te = find("transfer-encoding");
    const cl = find("content-length");
    if (te.length > 0) {
      if (!/(^|,)\s*chunked\s*$/i.test(te.join(","))) return this.fail("answer with a Transfer-Encoding that does not end in chunked");
      const chunked = readChunked(rest);
      if (chunked === "bad") return this.fail("malformed chunked answer body");
      if (!chunked) return false;
      this.answers.push({ ...partial, body: chunked.body });
      this.buffer = rest.subarray(chunked.used);
      return true;
    }
    if (cl.length > 0) {
      if (new Set(cl).size !== 1 || !/^\d+$/.test(cl[0]!)) return this.fail("answer with an unusable Content-Length");
      const length = Number(cl[0]);
      if (rest.length < length) return false;
      this.answers.push({ ...partial, body: rest.subarray(0, length) });
      this.buffer = rest.subarray(length);
      return true;
    }
    this.untilClose = partial;
    this.buffer = rest;
    return false;
  }
}

function readChunked(bytes: Buffer): { body: Buffer; used: number } | "bad" | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf("\r\n", at);
    if (lineEnd < 0) return undefined;
    const sizeText = bytes.subarray(at, lineEnd).toString("latin1").split(";")[0]!.trim();
    if (!/^[0-9a-fA-F]{1,8}$/.test(sizeText)) return "bad";
    const size = parseInt(sizeText, 16);
    at = lineEnd + 2;
    if (size === 0) {
      // Trailer lines up to an empty line.
      for (;;) {
        const end = bytes.indexOf("\r\n", at);
        if (end < 0) return undefined;
        const empty = end === at;
        at = end + 2;
        if (empty) return { body: Buffer.concat(parts), used: at };
      }
    }
    if (bytes.length < at + size + 2) return undefined;
    parts.push(bytes.subarray(at, at + size));
    if (bytes.subarray(at + size, at + size + 2).toString("latin1") !== "\r\n") return "bad";
    at += size + 2;
  }
}
