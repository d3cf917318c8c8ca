import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeViolations, runFramingProperty, startFramingRig, type FramingResult, type FramingRig } from "./framing/framing-rig.js";
import type { Property } from "./framing/properties.js";

/**
 * Issue 34 item 2: a property test of the gateway's framing and identity
 * headers. Thousands of generated raw requests (methods, credentials,
 * Connection lists, Content-Length / Transfer-Encoding combinations, bodies
 * that are requests themselves, forged identity and override headers),
 * pipelined on keep-alive connections, against a real gateway in front of
 * an upstream that records every request it parses. The same seed gives the
 * same requests: RELCAST_FRAMING_SEED and RELCAST_FRAMING_REQUESTS change
 * them. A failure names the seed, the bytes of the connection and a shrunk
 * request that fails the same way.
 */
// Seed 20261127 found the immediate close after `Connection: close` (a reset erased answers the client had not read
// yet; lingering-close.ts); seeds 7 and 424242 pass too.
const SEED = Number(process.env.RELCAST_FRAMING_SEED ?? 20261127);
const REQUESTS = Number(process.env.RELCAST_FRAMING_REQUESTS ?? 2000);

describe("gateway framing and identity, as a property of generated requests", () => {
  let rig: FramingRig;
  let result: FramingResult;
  beforeAll(async () => {
    rig = await startFramingRig();
    result = await runFramingProperty(rig, { seed: SEED, requests: REQUESTS, concurrency: 8, maxShrinkReplays: 100, maxShrinkMs: 10_000 });
    process.stderr.write(`framing property, seed ${SEED}: ${result.stats}\n`);
  });
  afterAll(() => rig?.close());

  it("exercises the proxy: many requests forwarded, many refused, many pipelined", () => {
    const requests = result.runs.reduce((s, r) => s + r.requests.length, 0);
    const answers = result.runs.flatMap((r) => r.answers);
    const forwarded = answers.filter((a) => a.headers.some(([n]) => n.toLowerCase() === "x-upstream-id")).length;
    expect(requests).toBeGreaterThanOrEqual(REQUESTS);
    expect(forwarded).toBeGreaterThan(requests / 20);
    expect(answers.length - forwarded).toBeGreaterThan(requests / 20);
    expect(result.runs.filter((r) => r.requests.length > 1).length).toBeGreaterThan(result.runs.length / 3);
  });

  const property = (p: Property, name: string) =>
    it(name, () => {
      expect(describeViolations(result, p, rig.ctx)).toBe("");
    });
  property("a", "(a) the upstream sees only requests the gateway accepted and answered, once each, as sent");
  property("b", "(b) upstream requests carry exactly the gateway's identity headers, no caller identity, override or credential header");
  property("c", "(c) every answer reaches its own caller, in order");
  property("d", "(d) a Connection header naming a framing or credential header is refused with 400");
  property("e", "(e) every connection ends: each request answered, or the connection closed after an answer saying so");
});
