import type { ConnectionRun, WritePlan } from "./connection-runner.js";
import type { Violation } from "./properties.js";
import type { RequestSpec } from "./request-model.js";

/**
 * Shrinks a failing request to a small one that still fails the same way:
 * alone on a fresh connection, one simplification at a time (drop a
 * header, a Connection token, a hidden request; plainer framing), keeping
 * each that still fails; or, when it fails only with the requests around
 * it, the whole connection again, without each other request in turn.
 * `replay` sends requests on a new connection (new markers) and returns the
 * violations of that connection alone.
 */
export type Replay = (specs: RequestSpec[], plan: WritePlan) => Promise<{ run: ConnectionRun; violations: Violation[] }>;

export interface Shrunk {
  /** The smallest failing connection found; its last request is the failing one. */
  run: ConnectionRun;
  alone: boolean;
  replays: number;
}

/** `outOfTime`: checked before each replay; once true, the smallest failing form found so far is kept. */
export async function shrink(violation: Violation, replay: Replay, maxReplays: number, outOfTime: () => boolean): Promise<Shrunk | undefined> {
  const { run, index } = violation;
  if (!run || index === undefined || !run.requests[index]) return undefined;
  let replays = 0;
  const fails = async (specs: RequestSpec[], plan: WritePlan) => {
    if (outOfTime()) return undefined;
    replays++;
    const result = await replay(specs, plan);
    return result.violations.some((v) => v.property === violation.property && v.kind === violation.kind) ? result.run : undefined;
  };
  const original = run.requests[index]!.spec;
  let best = await fails([original], ALONE);
  if (!best) return shrinkConnection(run, index, fails, maxReplays, () => replays);
  let spec = original;
  for (let progress = true; progress && replays < maxReplays; ) {
    progress = false;
    for (const candidate of simpler(spec)) {
      if (replays >= maxReplays) break;
      const found = await fails([candidate], ALONE);
      if (found) {
        spec = candidate;
        best = found;
        progress = true;
        break;
      }
    }
  }
  return { run: best, alone: true, replays };
}

/** The whole connection again, as it was written; then without each other request, one at a time, while it still fails. */
async function shrinkConnection(
  run: ConnectionRun,
  index: number,
  fails: (specs: RequestSpec[], plan: WritePlan) => Promise<ConnectionRun | undefined>,
  maxReplays: number,
  replays: () => number,
): Promise<Shrunk | undefined> {
  let kept = run.requests.map((_, i) => i);
  const attempt = (indexes: number[]) => {
    const position = new Map(indexes.map((i, k) => [i, k]));
    const kept = run.plan.groups.map((g, k) => ({ members: g.filter((i) => position.has(i)).map((i) => position.get(i)!), delay: run.plan.delayMs?.[k] ?? -1 })).filter((g) => g.members.length > 0);
    return fails(indexes.map((i) => run.requests[i]!.spec), { groups: kept.map((g) => g.members), splitAt: kept.map(() => -1), delayMs: kept.map((g) => g.delay) });
  };
  let best = await attempt(kept);
  if (!best) return undefined;
  for (const drop of [...kept].reverse()) {
    if (drop === index || replays() >= maxReplays) continue;
    const candidate = kept.filter((i) => i !== drop);
    const found = await attempt(candidate);
    if (found) {
      kept = candidate;
      best = found;
    }
  }
  return { run: best, alone: false, replays: replays() };
}

const ALONE: WritePlan = { groups: [[0]], splitAt: [-1] };

/** Specs one step simpler than `spec`. */
function simpler(spec: RequestSpec): RequestSpec[] {
  const out: RequestSpec[] = [];
  const with_ = (patch: Partial<RequestSpec>) => out.push({ ...spec, ...patch });
  spec.extra.forEach((_, i) => with_({ extra: spec.extra.filter((__, k) => k !== i) }));
  spec.connection.forEach((line, i) => {
    with_({ connection: spec.connection.filter((__, k) => k !== i) });
    const tokens = line.split(",").map((t) => t.trim()).filter(Boolean);
    if (tokens.length > 1 || tokens.join(", ") !== line) {
      tokens.forEach((_, t) => with_({ connection: spec.connection.map((l, k) => (k === i ? tokens.filter((__, j) => j !== t).join(", ") : l)).filter(Boolean) }));
      with_({ connection: spec.connection.map((l, k) => (k === i ? tokens.map((x) => x.toLowerCase()).join(", ") : l)) });
    }
  });
  if (spec.slow) with_({ slow: false });
  if (spec.query) with_({ query: "" });
  if (spec.method !== "GET") with_({ method: "GET" });
  if (spec.order !== 1) with_({ order: 1 });
  if (spec.version) {
    const { version: _version, ...asHttp11 } = spec;
    out.push(asHttp11);
  }
  const p = spec.payload;
  if (p.kind === "smuggle") {
    if (p.inner.length > 1) with_({ payload: { ...p, inner: p.inner.slice(0, 1) } });
    if (p.trailing) with_({ payload: { ...p, trailing: "" } });
    p.inner.forEach((inner, i) => {
      const set = (patch: Partial<typeof inner>) => with_({ payload: { ...p, inner: p.inner.map((r, k) => (k === i ? { ...r, ...patch } : r)) } });
      inner.headers.forEach((_, h) => set({ headers: inner.headers.filter((__, k) => k !== h) }));
      if (inner.body) set({ body: "" });
      if (inner.slow) set({ slow: false });
    });
  } else if (p.kind === "text" && p.text !== "x") {
    with_({ payload: { kind: "text", text: "x" } });
  }
  const f = spec.framing;
  if (f.kind === "chunked") {
    with_({ framing: { kind: "content-length", name: "Content-Length" } });
    if (f.extension) with_({ framing: { ...f, extension: false } });
    if (f.trailer) with_({ framing: { ...f, trailer: false } });
    if (f.chunks > 1) with_({ framing: { ...f, chunks: 1 } });
    if (f.te !== "chunked" || f.name !== "Transfer-Encoding") with_({ framing: { ...f, te: "chunked", name: "Transfer-Encoding" } });
  } else if (f.kind === "content-length" && f.name !== "Content-Length") {
    with_({ framing: { ...f, name: "Content-Length" } });
  }
  return out;
}
