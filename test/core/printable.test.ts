import { describe, expect, it } from "vitest";
import { printable, printableJson } from "../../src/core/printable.js";
import { quotedFolder } from "../../src/domain/record-keys.js";

/** Names read from a store or a listing are printed as escapes, never as raw control or format characters. */
describe("printable", () => {
  it("escapes newlines, ESC sequences, C1 controls, bidi and zero-width characters", () => {
    expect(printable("x\n::error title=pwned::injected\r\x1b[31mRED\x85\u202Egpj.exe\u200B\uFEFF\u2028")).toBe(
      "x\\n::error title=pwned::injected\\r\\x1b[31mRED\\x85\\u{202E}gpj.exe\\u{200B}\\u{FEFF}\\u{2028}",
    );
  });

  it("leaves ordinary text alone (non-Latin letters, emoji, punctuation), and newlines when asked", () => {
    expect(printable("1.2.0: Größe 日本語 עברית 🙂 \"quoted\" 100%")).toBe("1.2.0: Größe 日本語 עברית 🙂 \"quoted\" 100%");
    expect(printable("line one\nline\ttwo\x1b", { keepNewlines: true })).toBe("line one\nline\\ttwo\\x1b");
  });

  it("with kept newlines, no line starts as a workflow command does (leading spaces included)", () => {
    expect(printable("first\n::error title=x::y\n  ::warning::z\nok :: fine", { keepNewlines: true })).toBe("first\n\\x3a:error title=x::y\n  \\x3a:warning::z\nok :: fine");
    expect(printable("::stop-commands::t", { keepNewlines: true })).toBe("\\x3a:stop-commands::t");
  });

  it("no line starts as a workflow command after any white space the runner trims (no-break, ideographic, en spaces), with or without kept newlines", () => {
    expect(printable("x\n\u00a0::error::NBSP\n\u3000\u2002::warning::w", { keepNewlines: true })).toBe("x\n\u00a0\\x3a:error::NBSP\n\u3000\u2002\\x3a:warning::w");
    expect(printable("\u00a0::error::start")).toBe("\u00a0\\x3a:error::start");
    expect(printable("a::b")).toBe("a::b");
  });

  it("escapes the runner's older ##[command] form anywhere in a line", () => {
    expect(printable("x##[error]injected")).toBe("x#\\x23[error]injected");
    expect(printable("releases/##[stop-commands]abc/f", { keepNewlines: true })).toBe("releases/#\\x23[stop-commands]abc/f");
    expect(printable("## [1.0.0] heading # [x]")).toBe("## [1.0.0] heading # [x]");
  });

  it("printableJson writes the older ##[command] form as #\\u0023[ and parses back to the same value", () => {
    const value = { reason: "bad build ##[error]pwn ::error::x", names: ["/Contents/##[warning]y"] };
    const text = printableJson(value, 2);
    expect(text).not.toContain("##[");
    expect(text).toContain("#\\u0023[error]");
    expect(JSON.parse(text)).toEqual(value);
  });

  it("quotedFolder quotes a folder name that is not a plain version and escapes what JSON leaves raw", () => {
    expect(quotedFolder("1.2.0")).toBe("1.2.0");
    expect(quotedFolder("4.0.0\u202E")).toBe('"4.0.0\\u{202E}"');
    expect(quotedFolder("x\n::error::y")).toBe('"x\\n::error::y"');
  });
});

describe("printableJson (--json output)", () => {
  it("escapes what JSON.stringify leaves raw (format characters, C1, separators) and parses back to the same value", () => {
    const value = { problem: "index.html: \u202Egpj.exe\u200B \x85 \u2028 tag \u{E0041} ok 日本語 🙂", n: 1, list: ["\uFEFF"] };
    const text = printableJson(value, 2);
    expect(text).not.toMatch(/[\x7f-\x9f\p{Cf}\u2028\u2029]/u);
    expect(text).toContain("\\u202Egpj.exe\\u200B \\u0085 \\u2028 tag \\uDB40\\uDC41 ok 日本語 🙂");
    expect(JSON.parse(text)).toEqual(value);
    expect(JSON.parse(printableJson(value))).toEqual(value);
  });
});
