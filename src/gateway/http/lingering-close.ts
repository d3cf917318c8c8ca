import type { Server } from "node:http";
import type { Socket } from "node:net";

/** How long a closing connection is read on, at most, waiting for the client to close its side. */
export const LINGER_MS = 2_000;

/**
 * Connections close in stages (RFC 9112 §9.6). node's server closes a
 * connection after an answer that says `Connection: close` at once: it
 * half-closes and, as soon as the half-close is done, closes the socket,
 * without reading what arrived in between. A client still sending (a
 * pipelined request, the rest of one) then gets a reset from the TCP stack
 * for its unread bytes, and the reset can erase the answers it has not read
 * yet; a node client loses them on its next write (EPIPE destroys the
 * socket). The caller of a request the upstream carried out then never
 * learned its outcome. Here `destroySoon` (what node calls then, and
 * one-at-a-time.ts after a bare 400) half-closes after the answers and goes
 * on reading, dropping the bytes, until the client closes its side or
 * `lingerMs` passes. node's parser still reads those bytes: the requests in
 * them are not handled (one-at-a-time.ts: the connection is closing) and
 * bad bytes among them are not answered (answerClientError).
 */
export function closeConnectionsInStages(server: Server, lingerMs = LINGER_MS): void {
  server.on("connection", (socket: Socket) => {
    socket.destroySoon = () => closeInStages(socket, lingerMs);
  });
}

const LINGERING = Symbol("relcast.lingering");

function closeInStages(socket: Socket & { [LINGERING]?: true }, lingerMs: number): void {
  if (socket.destroyed) return;
  if (socket.writable) socket.end();
  if (socket[LINGERING]) return;
  socket[LINGERING] = true;
  const timer = setTimeout(() => socket.destroy(), lingerMs);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
}
