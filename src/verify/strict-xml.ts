import { SaxesParser } from "saxes";

/**
 * Reads a feed with saxes, a conforming XML 1.0 parser: it refuses every
 * character XML does not allow (in text, CDATA and attributes), malformed
 * entities, unbalanced tags and unbound namespace prefixes. fast-xml-parser,
 * which reads the items, is lenient about all of these; an installed copy's
 * NSXMLParser is not, so verify trusts the strict verdict.
 */
export function strictXmlProblem(xml: string, name: string): string | undefined {
  const parser = new SaxesParser({ xmlns: true, position: true });
  let first: Error | undefined;
  parser.on("error", (err) => {
    first ??= err;
  });
  try {
    parser.write(xml).close();
  } catch (err) {
    first ??= err as Error;
  }
  return first ? `${name} is not well-formed XML 1.0 (${first.message}); Sparkle rejects the whole feed` : undefined;
}
