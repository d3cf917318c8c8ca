import { performance } from "node:perf_hooks";

/**
 * The upstream timeout of every proxied request (a product's `timeoutMs`),
 * kept by one sweep instead of a timer per request.
 *
 * node's `timeout` option of `http.request` arms a socket timer for each
 * request and moves it on every read and write of that socket, then takes
 * it down when the socket goes back to the pool: timer-list updates and
 * listeners on every proxied request, about 11,000 instructions of it
 * under callgrind (docs/gateway.md, "Measured"). Here a request is an entry
 * of one list; a sweep every `tickMs` looks at each entry's byte count and
 * expires the ones that moved nothing for their `timeoutMs`. The timer
 * runs only while requests are in flight.
 *
 * The meaning is the socket timeout's: a request times out when its
 * upstream connection has carried no byte either way for `timeoutMs`
 * (waiting for a connection from the pool counts as idle). It fires at
 * `timeoutMs` at the earliest and at most two sweeps later (the first
 * sweep that sees a request can take the connection it was given for
 * progress), never early: idle time is measured from a sweep's clock that
 * comes after the last movement it saw.
 */
export interface Watched {
  readonly timeoutMs: number;
  /** Bytes moved so far on the request's upstream connection, 0 before it has one. */
  bytesMoved(): number;
  /** Whether it needs no watching any more (its upstream answer is complete). */
  finished(): boolean;
  /** Its time is up: fail it. Called once, after it has been unwatched. */
  expire(): void;
  /** The sweep's bookkeeping, kept on the request itself (see UpstreamDeadlines): its place in the watched list (-1: not watched), its byte count and since when it has not changed. */
  deadlineSlot: number;
  deadlineMoved: number;
  deadlineIdleSince: number;
}

/**
 * The watched requests are a plain array; each keeps its own place in it
 * and its counters, so watching and unwatching are a push and a swap with
 * the last, and nothing is allocated or put into a hash table per request. (A Map keyed by request, tried
 * first, made each of the gateway's young-generation collections about
 * five times longer and promoted about 5 KB per request to the old
 * generation: measured with --trace-gc under the throughput bench.)
 */
export class UpstreamDeadlines {
  private readonly watched: Watched[] = [];
  private timer: NodeJS.Timeout | undefined;

  /** `tickMs`: the sweep's period, see deadlineTick. */
  constructor(private readonly tickMs: number) {}

  watch(request: Watched): void {
    if (request.deadlineSlot >= 0) return;
    request.deadlineSlot = this.watched.length;
    request.deadlineMoved = request.bytesMoved();
    request.deadlineIdleSince = performance.now();
    this.watched.push(request);
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.sweep(), this.tickMs);
      this.timer.unref();
    }
  }

  unwatch(request: Watched): void {
    const slot = request.deadlineSlot;
    if (slot < 0) return;
    request.deadlineSlot = -1;
    const last = this.watched.pop()!;
    if (last !== request) {
      this.watched[slot] = last;
      last.deadlineSlot = slot;
    }
  }

  /** Requests being watched (for tests). */
  get size(): number {
    return this.watched.length;
  }

  private sweep(): void {
    if (this.watched.length === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const now = performance.now();
    const expired: Watched[] = [];
    // Backwards: unwatching swaps the last request into the slot being looked at, which was already looked at.
    for (let i = this.watched.length - 1; i >= 0; i--) {
      const request = this.watched[i]!;
      if (request.finished()) {
        this.unwatch(request);
        continue;
      }
      const moved = request.bytesMoved();
      if (moved !== request.deadlineMoved) {
        request.deadlineMoved = moved;
        request.deadlineIdleSince = now;
      } else if (now - request.deadlineIdleSince >= request.timeoutMs) {
        this.unwatch(request);
        expired.push(request);
      }
    }
    for (const request of expired) request.expire();
  }
}

/** A sweep period for these timeouts: a quarter of the smallest, from 25 ms to 1 s. */
export function deadlineTick(timeoutsMs: Iterable<number>): number {
  let smallest = Infinity;
  for (const t of timeoutsMs) smallest = Math.min(smallest, t);
  return Math.min(1000, Math.max(25, Number.isFinite(smallest) ? Math.floor(smallest / 4) : 1000));
}
