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
const WATCHED = Symbol("relcast.watchedResponse");
const UNPARSED = Symbol("relcast.unparsedBytes");
const ACTIVE_REQUEST = Symbol("relcast.activeRequest");

/** Requests one connection may have waiting behind the one being handled (browsers and HTTP libraries pipeline none). */
export const MAX_WAITING = 32;

interface TrackedSocket extends Socket {
  [ACTIVE]?: ServerResponse | undefined;
  [ACTIVE_REQUEST]?: IncomingMessage | undefined;
  [WAITING]?: Array<[IncomingMessage, ServerResponse]>;
  [WATCHED]?: ServerResponse;
  /** Bytes after the requests parsed so far could not be read as HTTP: the status to answer them with, once the requests before them are answered. */
  [UNPARSED]?: number;
}

export function oneRequestAtATime(listener: RequestListener): RequestListener {
  const run = (socket: TrackedSocket, req: IncomingMessage, res: ServerResponse) => {
    socket[ACTIVE] = res;
    socket[ACTIVE_REQUEST] = req;
    listener(req, res);
  };
  return (req, res) => {
    const socket = req.socket as TrackedSocket;
    if (closing(socket)) return;
    if (!busy(socket)) return run(socket, req, res);
    const queue = (socket[WAITING] ??= []);
    // A client that pipelines this far ahead of its answers is not one that reads them: node would go on parsing
    // and queueing its requests (and their bodies) without bound. The connection is closed; none of the requests
    // not yet handled is run.
    if (queue.length >= MAX_WAITING) {
      queue.length = 0;
      socket.destroy();
      return;
    }
    queue.push([req, res]);
    afterActive(socket, () => advance(socket));
  };

  function advance(socket: TrackedSocket): void {
    const waiting = socket[WAITING] ?? [];
    socket[ACTIVE] = undefined;
    if (closing(socket)) {
      waiting.length = 0;
      return;
    }
    const next = waiting.shift();
    if (next) {
      run(socket, next[0], next[1]);
      if (waiting.length > 0 || socket[UNPARSED] !== undefined) afterActive(socket, () => advance(socket));
      return;
    }
    if (socket[UNPARSED] !== undefined) answerUnparsed(socket, socket[UNPARSED]);
  }
}

/**
 * Whether a request of this connection is being handled: its answer is not
 * done until node has processed its end (and, after `Connection: close`,
 * ended the connection), which is when node detaches the answer from the
 * socket. `writableFinished` comes earlier (the bytes are with the kernel
 * before node's finish handler runs), and a request parsed in between was
 * handled although the answer before it closed the connection.
 */
function busy(socket: TrackedSocket): boolean {
  const active = socket[ACTIVE];
  return active !== undefined && !active.destroyed && active.socket !== null;
}

/** Calls `then` once, when the connection's active answer is finished or its connection closed. */
function afterActive(socket: TrackedSocket, then: () => void): void {
  const active = socket[ACTIVE]!;
  if (socket[WATCHED] === active) return;
  socket[WATCHED] = active;
  let called = false;
  const done = () => {
    if (called) return;
    called = true;
    active.off("finish", done);
    active.off("close", done);
    then();
  };
  active.once("finish", done);
  active.once("close", done);
}

/**
 * The server's `clientError` handler: bytes node cannot parse as HTTP/1.1
 * on a connection. node's own handler answers them at once with a bare 400
 * and destroys the connection, so a caller whose earlier request was still
 * at the upstream read that 400 as its answer while the upstream carried
 * the request out (a retried POST then runs twice). Here the requests
 * parsed before the bad bytes are answered first, in order, and only then
 * does the 400 (431 for headers too large, 408 for a request too slow) go
 * out, with `Connection: close`.
 */
export function answerClientError(err: Error & { code?: string }, rawSocket: Socket): void {
  const socket = rawSocket as TrackedSocket;
  // The connection is being closed after its last answer: what the client still sends is read and dropped until it
  // closes its side (lingering-close.ts); destroying it now would reset the connection over answers not yet read.
  if (socket.writableEnded && !socket.destroyed && err.code !== "ECONNRESET") return;
  if (!socket.writable || err.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
  // Bad bytes inside a request's body (a malformed chunk): that request can never complete. A queued one is
  // dropped unhandled; the one being handled is cut as node would (its answer, if not begun, is the 400).
  const waiting = socket[WAITING] ?? [];
  while (waiting.length > 0 && !waiting[waiting.length - 1]![0].complete) waiting.pop();
  if (waiting.length === 0 && busy(socket) && socket[ACTIVE_REQUEST]?.complete === false) {
    if (socket[ACTIVE]!.headersSent) socket.destroy();
    else answerUnparsed(socket, status);
    return;
  }
  answerAfterPending(socket, status);
}

/**
 * A CONNECT request (node's server event `connect`): the gateway tunnels
 * nothing. node has stopped reading the connection and, without a listener,
 * destroyed it at once, over the answers to requests before it that the
 * upstream may already have carried out. Here those are answered first,
 * then 501 with `Connection: close`, as for bytes that do not parse.
 */
export function answerConnect(_req: IncomingMessage, rawSocket: Socket): void {
  const socket = rawSocket as TrackedSocket;
  // node took its own error listener off the socket when it handed it over: a reset now must not crash the gateway.
  socket.on("error", () => socket.destroy());
  if (closing(socket)) return;
  answerAfterPending(socket, 501);
}

/** Answers `status` and closes, once the connection's active and waiting requests are answered. */
function answerAfterPending(socket: TrackedSocket, status: number): void {
  const waiting = socket[WAITING] ?? [];
  if (busy(socket) || waiting.length > 0) {
    socket[UNPARSED] = status;
    socket[WAITING] ??= [];
    // advance() answers the bad bytes when the requests before them are answered.
    if (busy(socket) && socket[WAITING].length === 0) afterActive(socket, () => advanceAfterError(socket));
    return;
  }
  answerUnparsed(socket, status);
}

/** The chain's end when only the bad bytes are left: answer them (advance() would too, but it lives in the listener's closure). */
function advanceAfterError(socket: TrackedSocket): void {
  socket[ACTIVE] = undefined;
  if (!closing(socket) && (socket[WAITING]?.length ?? 0) === 0 && socket[UNPARSED] !== undefined) answerUnparsed(socket, socket[UNPARSED]);
}

const REASONS: Record<number, string> = { 400: "Bad Request", 408: "Request Timeout", 431: "Request Header Fields Too Large", 501: "Not Implemented" };

/** A bare answer, as node's own: no body, so it is a valid answer whatever the request was (a HEAD's too). */
function answerUnparsed(socket: Socket, status: number): void {
  if (closing(socket)) return;
  socket.end(`HTTP/1.1 ${status} ${REASONS[status]}\r\nConnection: close\r\nCache-Control: no-store\r\nContent-Length: 0\r\n\r\n`);
  socket.destroySoon();
}

/** The connection is being closed: an earlier answer said `Connection: close`, or the peer or a failure ended it. */
function closing(socket: Socket): boolean {
  return socket.writableEnded || socket.destroyed;
}
