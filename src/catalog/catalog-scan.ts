import { RelcastError } from "../core/errors.js";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

export interface CatalogEnvelope {
  pluginId: string;
  count: number;
}

function broken(source: string, what: string): RelcastError {
  return new RelcastError("E_CATALOG", `the catalog ${source} is not a valid catalog (JSON envelope): ${what}`, "restore it from the records with `relcast rebuild` (each release keeps releases/<version>/release.json)");
}

/**
 * Reads a catalog (§2.5 envelope) as a stream, handing each element of
 * `versions` to `onElement` as its raw JSON bytes, in order, so a catalog of
 * any length is read in constant memory. Everything outside the array (the
 * envelope's other members) is parsed at the end and returned.
 */
export async function scanCatalog(source: string, chunks: AsyncIterable<Buffer>, onElement: (raw: Buffer, index: number, offset: number) => void | Promise<void>): Promise<CatalogEnvelope> {
  const skeleton: Buffer[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let expectKey = false;
  let keyParts: Buffer[] | undefined;
  let lastKey = "";
  let inVersions = false;
  let elementParts: Buffer[] | undefined;
  let index = 0;
  let consumed = 0;
  let elementOffset = 0;

  for await (const chunk of chunks) {
    let skeletonFrom = inVersions ? -1 : 0;
    let elementFrom = elementParts ? 0 : -1;
    let keyFrom = keyParts ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      if (inString) {
        if (escaped) {
          escaped = false;
          continue;
        }
        // Jump to the next quote or backslash: most bytes of a catalog are inside strings.
        const quote = chunk.indexOf(QUOTE, i);
        const slash = chunk.indexOf(BACKSLASH, i);
        if (slash !== -1 && (quote === -1 || slash < quote)) {
          i = slash;
          escaped = true;
          continue;
        }
        if (quote === -1) {
          i = chunk.length;
          break;
        }
        i = quote;
        inString = false;
        if (keyParts) {
          keyParts.push(chunk.subarray(keyFrom, i + 1));
          lastKey = JSON.parse(Buffer.concat(keyParts).toString("utf8")) as string;
          keyParts = undefined;
          keyFrom = -1;
        }
        continue;
      }
      const b = chunk[i]!;
      if (b === QUOTE) {
        inString = true;
        if (depth === 1 && expectKey) {
          keyParts = [];
          keyFrom = i;
        }
      } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
        if (inVersions && depth === 2) {
          if (b !== OPEN_OBJECT) throw broken(source, `versions[${index}] is not an object`);
          elementParts = [];
          elementFrom = i;
          elementOffset = consumed + i;
        }
        depth++;
        if (depth === 1) expectKey = true;
        if (depth === 2 && b === OPEN_ARRAY && lastKey === "versions" && !inVersions) {
          inVersions = true;
          skeleton.push(chunk.subarray(skeletonFrom, i + 1));
          skeletonFrom = -1;
        }
      } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
        depth--;
        if (depth < 0) throw broken(source, "a closing bracket without an opening one");
        if (inVersions && depth === 2 && elementParts) {
          elementParts.push(chunk.subarray(elementFrom, i + 1));
          const raw = elementParts.length === 1 ? elementParts[0]! : Buffer.concat(elementParts);
          elementParts = undefined;
          elementFrom = -1;
          await onElement(raw, index++, elementOffset);
        } else if (inVersions && depth === 1) {
          inVersions = false;
          skeletonFrom = i;
        }
      } else if (depth === 1 && b === COLON) {
        expectKey = false;
      } else if (depth === 1 && b === COMMA) {
        expectKey = true;
      } else if (inVersions && depth === 2 && b !== COMMA && b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) {
        throw broken(source, `versions[${index}] is not an object`);
      }
    }
    if (skeletonFrom !== -1) skeleton.push(chunk.subarray(skeletonFrom));
    if (elementParts && elementFrom !== -1) elementParts.push(chunk.subarray(elementFrom));
    if (keyParts && keyFrom !== -1) keyParts.push(chunk.subarray(keyFrom));
    consumed += chunk.length;
  }

  let envelope: unknown;
  try {
    envelope = JSON.parse(Buffer.concat(skeleton).toString("utf8"));
  } catch (err) {
    throw new RelcastError("E_CATALOG", `the catalog ${source} is not valid JSON (${(err as Error).message})`, "restore it from the records with `relcast rebuild` (each release keeps releases/<version>/release.json)");
  }
  const e = envelope as Partial<Record<string, unknown>> | null;
  if (typeof e !== "object" || e === null || Array.isArray(e)) throw broken(source, "not a JSON object");
  if (typeof e.pluginId !== "string") throw broken(source, "pluginId is missing or not a string");
  if (typeof e.count !== "number" || !Number.isInteger(e.count) || e.count < 0) throw broken(source, "count is missing or not a whole number");
  if (!Array.isArray(e.versions)) throw broken(source, "versions is missing or not an array");
  return { pluginId: e.pluginId, count: e.count };
}
