import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * Requests on one connection are handled one at a time, in order, and a
 * request behind an answer that closes the connection is never handled.
 *
 * node's server hands every pipelined request to the listener as soon as
 * it has parsed it, while the answers go out in order. So a request sent
 * behind one the gateway refuses with `Connection: close` (a body too
 * large, a forbidden Connection list) was forwarded to the upstream, and
 * its answer then had no connection to go to: the upstream acted on a
 * request nobody saw answered. Here a request waits until the answer
 * before it is finished; if that answer ended the connection (node ends
 * the socket before the answer's `finish` listeners added here run), the
 * requests behind it are dropped unhandled. Pipelining stays correct,
 * only not concurrent, which no client relies on (browsers and HTTP
 * libraries do not pipeline).
 */
const ACTIVE = Symbol("relcast.activeResponse");
const WAITING = Symbol("relcast.waitingRequests");

interface TrackedSocket extends Socket {
  [ACTIVE]?: ServerResponse;
  [WAITING]?: Array<[IncomingMessage, ServerResponse]>;
}

export function oneRequestAtATime(listener: RequestListener): RequestListener {
  const run = (socket: TrackedSocket, req: IncomingMessage, res: ServerResponse) => {
    socket[ACTIVE] = res;
    listener(req, res);
  };
  const whenDone = (socket: TrackedSocket, active: ServerResponse) => {
    let called = false;
    const done = () => {
      if (called) return;
      called = true;
      active.off("finish", done);
      active.off("close", done);
      advance(socket);
    };
    active.once("finish", done);
    active.once("close", done);
  };
  const advance = (socket: TrackedSocket) => {
    const waiting = socket[WAITING]!;
    socket[ACTIVE] = undefined;
    if (closing(socket)) {
      waiting.length = 0;
      return;
    }
    const [req, res] = waiting.shift()!;
    run(socket, req, res);
    if (waiting.length > 0) whenDone(socket, res);
  };
  return (req, res) => {
    const socket = req.socket as TrackedSocket;
    if (closing(socket)) return;
    const active = socket[ACTIVE];
    if (active === undefined || active.writableFinished || active.destroyed) return run(socket, req, res);
    const waiting = (socket[WAITING] ??= []);
    waiting.push([req, res]);
    if (waiting.length === 1) whenDone(socket, active);
  };
}

/** The connection is being closed: an earlier answer said `Connection: close`, or the peer or a failure ended it. */
function closing(socket: Socket): boolean {
  return socket.writableEnded || socket.destroyed;
}
