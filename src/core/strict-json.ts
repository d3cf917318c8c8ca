/**
 * A JSON reader for requests that must mean one thing (I-JSON, RFC 7493):
 * RFC 8259 grammar, and it refuses what JSON.parse quietly settles, so no
 * two readers of the same bytes can disagree about them:
 * - a key that appears twice in one object, at any depth, compared after
 *   its escapes are decoded (`"client_id"` and `"client\u005fid"` are one
 *   key); JSON.parse keeps the last, other readers the first;
 * - a string with a lone surrogate (`"\ud800"`), which has no UTF-8 form;
 * - the key `__proto__`, which JSON.parse makes an own property but
 *   `Object.assign` and most merge helpers read as the prototype;
 * - nesting deeper than `MAX_DEPTH`.
 * Objects come back with no prototype. JSON.parse's reviver cannot do this:
 * it sees each object after the duplicate has already replaced the first.
 */
export type StrictJsonResult = { ok: true; value: unknown } | { ok: false; reason: string };

export const MAX_DEPTH = 32;

export function parseStrictJson(text: string): StrictJsonResult {
  const reader = new Reader(text);
  try {
    reader.skipSpace();
    const value = reader.value(0);
    reader.skipSpace();
    if (reader.at < text.length) reader.fail("has text after the JSON value");
    return { ok: true, value };
  } catch (err) {
    if (err instanceof StrictJsonError) return { ok: false, reason: err.message };
    throw err;
  }
}

class StrictJsonError extends Error {}

const LONE_SURROGATE = /\p{Cs}/u;
const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

class Reader {
  at = 0;
  /** Keys and indexes down to the value being read, for messages. */
  private readonly path: (string | number)[] = [];

  constructor(private readonly text: string) {}

  fail(what: string): never {
    const where = this.path.length ? ` (in ${this.pathText()})` : "";
    throw new StrictJsonError(`${what} at character ${this.at + 1}${where}`);
  }

  skipSpace(): void {
    for (let c = this.text.charCodeAt(this.at); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = this.text.charCodeAt(++this.at));
  }

  value(depth: number): unknown {
    const c = this.text[this.at];
    if (c === "{" || c === "[") {
      if (depth >= MAX_DEPTH) this.fail(`nests deeper than ${MAX_DEPTH} levels`);
      return c === "{" ? this.object(depth + 1) : this.array(depth + 1);
    }
    if (c === '"') return this.string();
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return this.number();
    for (const [word, value] of [["true", true], ["false", false], ["null", null]] as const) {
      if (this.text.startsWith(word, this.at)) {
        this.at += word.length;
        return value;
      }
    }
    return this.fail(c === undefined ? "ends where a value was expected" : `has ${JSON.stringify(c)} where a value was expected`);
  }

  private object(depth: number): Record<string, unknown> {
    const object: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    this.at++;
    this.skipSpace();
    if (this.text[this.at] === "}") {
      this.at++;
      return object;
    }
    for (;;) {
      if (this.text[this.at] !== '"') this.fail("has no quoted key where an object member was expected");
      const start = this.at;
      const key = this.string();
      if (key === "__proto__") this.failAt(start, 'uses the key "__proto__", which JavaScript readers disagree about');
      if (Object.prototype.hasOwnProperty.call(object, key)) this.failAt(start, `repeats the key ${JSON.stringify(key)}`);
      this.skipSpace();
      if (this.text[this.at] !== ":") this.fail("has no ':' after an object key");
      this.at++;
      this.skipSpace();
      this.path.push(key);
      object[key] = this.value(depth);
      this.path.pop();
      this.skipSpace();
      const next = this.text[this.at++];
      if (next === "}") return object;
      if (next !== ",") this.fail("has no ',' or '}' after an object member");
      this.skipSpace();
    }
  }

  private array(depth: number): unknown[] {
    const array: unknown[] = [];
    this.at++;
    this.skipSpace();
    if (this.text[this.at] === "]") {
      this.at++;
      return array;
    }
    for (;;) {
      this.path.push(array.length);
      array.push(this.value(depth));
      this.path.pop();
      this.skipSpace();
      const next = this.text[this.at++];
      if (next === "]") return array;
      if (next !== ",") this.fail("has no ',' or ']' after an array element");
      this.skipSpace();
    }
  }

  private string(): string {
    const start = this.at++;
    let out = "";
    let run = this.at;
    for (;;) {
      const c = this.text.charCodeAt(this.at);
      if (c === 0x22) break;
      if (Number.isNaN(c)) this.failAt(start, "has a string that never ends");
      if (c < 0x20) this.fail("has a control character inside a string (escape it)");
      if (c !== 0x5c) {
        this.at++;
        continue;
      }
      out += this.text.slice(run, this.at);
      const e = this.text[this.at + 1] ?? "";
      if (e === "u") {
        const hex = this.text.slice(this.at + 2, this.at + 6);
        if (!/^[0-9A-Fa-f]{4}$/.test(hex)) this.fail("has a \\u escape without four hex digits");
        out += String.fromCharCode(parseInt(hex, 16));
        this.at += 6;
      } else {
        const decoded = ESCAPES[e];
        if (decoded === undefined) this.fail(`has an unknown escape \\${e}`);
        out += decoded;
        this.at += 2;
      }
      run = this.at;
    }
    out += this.text.slice(run, this.at);
    this.at++;
    if (LONE_SURROGATE.test(out)) this.failAt(start, "has a string with a lone surrogate (not Unicode text)");
    return out;
  }

  private number(): number {
    const match = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    match.lastIndex = this.at;
    const m = match.exec(this.text);
    if (!m) this.fail("has a malformed number");
    const value = Number(m[0]);
    if (!Number.isFinite(value)) this.fail("has a number too large for a double");
    this.at += m[0].length;
    return value;
  }

  private failAt(at: number, what: string): never {
    this.at = at;
    return this.fail(what);
  }

  private pathText(): string {
    return "$" + this.path.map((p) => (typeof p === "number" ? `[${p}]` : /^[A-Za-z_$][\w$]*$/.test(p) ? `.${p}` : `[${JSON.stringify(p)}]`)).join("");
  }
}
