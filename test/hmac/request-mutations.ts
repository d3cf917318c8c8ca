import { NASTY_CHARS, randomString, type Random } from "./seeded-random.js";

/**
 * Ways a signed request gets damaged, for the fuzzer: edits to one header,
 * the target, the method or the body. Each returns a new request.
 */
export type FuzzRequest = { method: string; target: string; headers: Record<string, string | string[]>; body: Buffer };

type Mutation = (request: FuzzRequest, random: Random) => FuzzRequest;

const SIGNED_NAMES = ["authorization", "date", "digest"] as const;

function editString(value: string, random: Random): string {
  const at = random.int(value.length + 1);
  switch (random.int(9)) {
    case 0: return value.slice(0, at) + random.pick(NASTY_CHARS) + value.slice(at);
    case 1: return value.slice(0, at) + value.slice(at + 1 + random.int(4));
    case 2: return value.slice(0, at) + random.pick(NASTY_CHARS) + value.slice(at + 1);
    case 3: return value.slice(0, at);
    case 4: return value.slice(0, at) + value.slice(at, at + 20).repeat(1 + random.int(5_000)) + value.slice(at);
    case 5: return value.replace(/"/g, random.pick(["'", '""', '\\"', "", "\u201c"]));
    case 6: return flipCase(value, at);
    case 7: return value.replace(/, /g, random.pick([",", ",  ", " , ", ",\t", ";", ", , "]));
    default: return randomString(random, 200);
  }
}

function flipCase(value: string, at: number): string {
  const c = value[at] ?? "";
  const flipped = c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase();
  return value.slice(0, at) + flipped + value.slice(at + 1);
}

const PARAMS = ['username="client-1"', 'algorithm="hmac-sha256"', 'headers="date request-line"', 'signature="AAAA"', 'nonce="1"', 'username=""', "signature"];

const mutations: readonly Mutation[] = [
  (r, random) => withHeader(r, random.pick(SIGNED_NAMES), (v) => editString(v, random)),
  (r, random) => withHeader(r, "authorization", (v) => `${v}, ${random.pick(PARAMS)}`),
  (r, random) => withHeader(r, "authorization", (v) => {
    const parts = v.replace(/^hmac /, "").split(", ");
    const i = random.int(parts.length);
    const j = random.int(parts.length);
    [parts[i], parts[j]] = [parts[j]!, parts[i]!];
    if (random.chance(0.3)) parts.splice(random.int(parts.length), 1);
    if (random.chance(0.3)) parts.splice(random.int(parts.length + 1), 0, random.pick(parts));
    return `${random.pick(["hmac", "HMAC", "Hmac", "hmac ", "Signature", "Bearer", ""])} ${parts.join(", ")}`;
  }),
  (r, random) => withHeader(r, random.pick(SIGNED_NAMES), () => randomString(random, random.chance(0.1) ? 100_000 : 300)),
  (r, random) => {
    const headers = { ...r.headers };
    delete headers[random.pick(SIGNED_NAMES)];
    return { ...r, headers };
  },
  (r, random) => {
    const name = random.pick(SIGNED_NAMES);
    const value = r.headers[name];
    return typeof value === "string" ? { ...r, headers: { ...r.headers, [name]: [value, random.chance(0.5) ? value : editString(value, random)] } } : r;
  },
  (r, random) => ({ ...r, target: editString(r.target, random) }),
  (r, random) => ({ ...r, target: random.pick([r.target.split("?")[0]!, `${r.target}&`, r.target.replace("?", "?z=0&"), r.target.replace(/=/g, "%3D"), r.target.toUpperCase()]) }),
  (r, random) => ({ ...r, method: random.pick(["get", "POST", "PUT", "PATCH", "DELETE", "HEAD", "GET ", "G\u00c9T", ""]) }),
  (r, random) => {
    const body = Buffer.from(r.body);
    if (body.length > 0 && random.chance(0.7)) body[random.int(body.length)]! ^= 1 << random.int(8);
    return { ...r, body: random.chance(0.5) ? body : Buffer.concat([body, Buffer.from(randomString(random, 5) || " ")]) };
  },
];

function withHeader(r: FuzzRequest, name: string, edit: (value: string) => string): FuzzRequest {
  const value = r.headers[name];
  return { ...r, headers: { ...r.headers, [name]: edit(typeof value === "string" ? value : "") } };
}

export function mutate(request: FuzzRequest, random: Random): FuzzRequest {
  let out = request;
  const count = 1 + random.int(3);
  for (let i = 0; i < count; i++) out = random.pick(mutations)(out, random);
  return out;
}
