import { kitVerifier } from "../../../src/gateway/hmac-kit.js";
import { startHarness, type Harness } from "../harness.js";
import { tokensFor } from "../oauth-driver.js";
import { runConnection, type ConnectionRun, type WritePlan } from "./connection-runner.js";
import { Prng } from "./prng.js";
import { checkProperties, PROPERTY_TEXT, upstreamId, type Property, type Violation } from "./properties.js";
import { startRecordingUpstream, type RecordingUpstream } from "./recording-upstream.js";
import { anchorConnections, generateConnection, type ConnectionPlan } from "./request-generator.js";
import { renderRequest, showRequest, type RenderContext, type RequestSpec } from "./request-model.js";
import { shrink, type Shrunk } from "./shrink.js";

/**
 * The framing property test's rig: a real gateway (test/gateway/harness.ts)
 * whose products all point at a recording upstream, the three bearer tokens
 * and the HMAC keys of the harness, and the run itself: generate
 * connections from a seed, send them `concurrency` at a time, let the
 * upstream settle, check the properties, shrink one example of each kind of
 * violation.
 */
export interface FramingRig {
  harness: Harness;
  upstream: RecordingUpstream;
  ctx: RenderContext;
  close(): Promise<void>;
}

const STALL_MS = 10_000;

export async function startFramingRig(): Promise<FramingRig> {
  const upstream = await startRecordingUpstream();
  let harness: Harness;
  try {
    harness = await startHarness(kitVerifier, (config) => {
      config.products = {
        crm: { upstream: upstream.url },
        billing: { upstream: `${upstream.url}/billing-base` },
        hr: { upstream: upstream.url, auth: ["hmac"] },
      };
    });
  } catch (err) {
    await upstream.close();
    throw err;
  }
  try {
    const [crm, billingRead, all] = [await tokensFor(harness, "crm"), await tokensFor(harness, "billing:read"), await tokensFor(harness, "crm billing")];
    const ctx: RenderContext = {
      gatewayHost: new URL(harness.gateway.url).host,
      tokens: { crm: crm.access_token, "billing-read": billingRead.access_token, all: all.access_token },
      date: harness.clock(),
    };
    return {
      harness,
      upstream,
      ctx,
      async close() {
        await harness.close();
        await upstream.close();
      },
    };
  } catch (err) {
    await harness.close();
    await upstream.close();
    throw err;
  }
}

export interface FramingResult {
  seed: number;
  runs: ConnectionRun[];
  violations: Violation[];
  /** One shrunk example per kind of violation (`property/kind`). */
  examples: Map<string, { violation: Violation; count: number; shrunk: Shrunk | undefined }>;
  stats: string;
}

export interface FramingOptions {
  seed: number;
  /** At least this many requests are generated (whole connections). */
  requests: number;
  /** Connections open at once. */
  concurrency: number;
  maxShrinkReplays: number;
  /** Shrinking stops after this long (a bound on the test's time when much fails). */
  maxShrinkMs: number;
}

export async function runFramingProperty(rig: FramingRig, options: FramingOptions): Promise<FramingResult> {
  const rng = new Prng(options.seed);
  const plans: ConnectionPlan[] = anchorConnections();
  for (let total = 0; total < options.requests; ) {
    const plan = generateConnection(rng, plans.length);
    plans.push(plan);
    total += plan.requests.length;
  }
  const port = rig.harness.gateway.port;
  const runs: ConnectionRun[] = new Array(plans.length);
  let next = 0;
  const worker = async () => {
    while (next < plans.length) {
      const plan = plans[next++]!;
      const label = `c${plan.index}`;
      const requests = plan.requests.map((spec, i) => renderRequest(spec, `${label}r${i}`, rig.ctx));
      runs[plan.index] = await runConnection(port, label, requests, plan, STALL_MS);
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  await rig.upstream.settle(150, 3000);
  const sentMs = Date.now() - started;
  const violations = checkProperties({ runs, records: rig.upstream.records, parseErrors: rig.upstream.parseErrors });

  let replayCount = 0;
  const replay = async (specs: RequestSpec[], plan: WritePlan) => {
    const label = `m${replayCount++}`;
    const requests = specs.map((spec, i) => renderRequest(spec, `${label}r${i}`, rig.ctx));
    const errorsBefore = rig.upstream.parseErrors.length;
    const recordsBefore = rig.upstream.records.length;
    const run = await runConnection(port, label, requests, plan, STALL_MS);
    await rig.upstream.settle(60, 1000);
    return { run, violations: checkProperties({ runs: [run], records: rig.upstream.records.slice(recordsBefore), parseErrors: rig.upstream.parseErrors.slice(errorsBefore) }) };
  };
  const examples = new Map<string, { violation: Violation; count: number; shrunk: Shrunk | undefined }>();
  for (const v of violations) {
    const key = `${v.property}/${v.kind}`;
    const seen = examples.get(key);
    if (seen) seen.count++;
    else examples.set(key, { violation: v, count: 1, shrunk: undefined });
  }
  let budget = options.maxShrinkReplays;
  const shrinkUntil = Date.now() + options.maxShrinkMs;
  for (const example of examples.values()) {
    if (budget <= 0 || Date.now() > shrinkUntil) break;
    example.shrunk = await shrink(example.violation, replay, Math.min(40, budget), () => Date.now() > shrinkUntil);
    budget -= example.shrunk?.replays ?? 2;
  }
  const stats = `${statistics(runs, rig)}; sent in ${sentMs} ms, ${replayCount} shrinking replays in ${Date.now() - started - sentMs} ms`;
  return { seed: options.seed, runs, violations, examples, stats };
}

function statistics(runs: ConnectionRun[], rig: FramingRig): string {
  const requests = runs.reduce((s, r) => s + r.requests.length, 0);
  const answers = runs.flatMap((r) => r.answers);
  const forwarded = answers.filter((a) => upstreamId(a) !== undefined).length;
  const statuses = new Map<number, number>();
  for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
  const pipelined = runs.filter((r) => r.requests.length > 1).length;
  return (
    `${requests} requests on ${runs.length} connections (${pipelined} with several requests); ${answers.length} answers, ` +
    `${forwarded} from the upstream; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}; ` +
    `upstream records ${rig.upstream.records.length} (${rig.upstream.records.filter((r) => !r.complete).length} broken off)`
  );
}

/** The failure text of one property: the seed, and for each kind the count, the first example's bytes and its shrunk form. */
export function describeViolations(result: FramingResult, property: Property, ctx: RenderContext): string {
  const lines: string[] = [];
  for (const [key, { violation, count, shrunk }] of result.examples) {
    if (violation.property !== property) continue;
    lines.push(`${key}: ${count} violation(s). First: ${violation.detail}`);
    if (violation.run && violation.index !== undefined) {
      lines.push(`  on connection ${violation.run.label}, request #${violation.index + 1} of ${violation.run.requests.length}; the connection, in writes:`);
      lines.push(...showConnection(violation.run, ctx));
    }
    if (violation.related && violation.related.run !== violation.run) {
      lines.push(`  the answer belonged to connection ${violation.related.run.label}, request #${violation.related.index + 1}:`);
      lines.push(...showConnection(violation.related.run, ctx));
    }
    if (shrunk) {
      lines.push(`  shrunk (${shrunk.alone ? "alone on a fresh connection" : "with the requests around it on a fresh connection"}, ${shrunk.replays} replays):`);
      lines.push(...showConnection(shrunk.run, ctx));
    } else if (violation.run) {
      lines.push("  not reproduced on a fresh connection of its own (depends on other connections)");
    }
  }
  if (lines.length === 0) return "";
  return [`property (${property}) ${PROPERTY_TEXT[property]}; seed ${result.seed} (RELCAST_FRAMING_SEED=${result.seed} to run it again)`, ...lines].join("\n");
}

/** Each request's bytes with its write and the answer it got. */
function showConnection(run: ConnectionRun, ctx: RenderContext): string[] {
  const write = new Map(run.plan.groups.flatMap((g, k) => g.map((i) => [i, k] as const)));
  return run.requests.map((r, i) => {
    const answer = run.answers[i];
    const got = answer ? `${answer.status}${upstreamId(answer) !== undefined ? " from the upstream" : ""}` : i < run.written ? "no answer" : "not written";
    const k = write.get(i) ?? 0;
    const delay = run.plan.delayMs?.[k] ?? -1;
    const when = delay >= 0 ? ` (${delay} ms after the previous write, not waiting for answers)` : "";
    return `    #${i + 1} write ${k + 1}${when} -> ${got}: ${showRequest(r.bytes, ctx)}`;
  });
}
