import net from "node:net";
import type { RenderedRequest } from "./request-model.js";
import { ResponseReader, type Answer } from "./response-reader.js";

/**
 * Sends requests on one keep-alive TCP connection to the gateway, a group
 * at a time (each group in one write, pipelined; the next group once the
 * answers to this one are in, or after a set delay), and reads the answers
 * in order. It stops
 * when every request is answered, when the gateway closes the connection,
 * or when nothing arrives for `stallMs` (a hang guard, reported as such).
 */
export interface ConnectionRun {
  label: string;
  requests: RenderedRequest[];
  plan: WritePlan;
  answers: Answer[];
  /** How many requests had been written when the connection ended. */
  written: number;
  closedByGateway: boolean;
  /** The gateway reset the connection (ECONNRESET): answers it had sent may have been lost in transit. */
  reset: boolean;
  stalled: boolean;
  readerError: string | undefined;
}

export interface WritePlan {
  groups: number[][];
  /** Per group: split the write at this fraction of its bytes (a turn of the event loop between), or -1. */
  splitAt: number[];
  /**
   * Per group: write it this many ms after the previous write, whether or
   * not the answers to that one are in (bytes arriving while a request is
   * in flight); absent or -1: after the answers.
   */
  delayMs?: number[];
}

export function runConnection(port: number, label: string, requests: RenderedRequest[], plan: WritePlan, stallMs: number): Promise<ConnectionRun> {
  return new Promise((resolve) => {
    const reader = new ResponseReader((i) => requests[i]?.method);
    const run: ConnectionRun = { label, requests, plan, answers: reader.answers, written: 0, closedByGateway: false, reset: false, stalled: false, readerError: undefined };
    const socket = net.connect(port, "127.0.0.1");
    let group = 0;
    let finished = false;
    let stall: NodeJS.Timeout | undefined;
    const armStall = () => {
      clearTimeout(stall);
      stall = setTimeout(() => {
        run.stalled = true;
        socket.destroy();
      }, stallMs);
    };
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(stall);
      reader.end();
      run.readerError = reader.error;
      if (run.answers.length < requests.length) run.closedByGateway = !run.stalled;
      resolve(run);
    };
    const writeGroup = () => {
      const members = plan.groups[group]!;
      const bytes = Buffer.concat(members.map((i) => requests[i]!.bytes));
      run.written = members[members.length - 1]! + 1;
      const split = plan.splitAt[group] ?? -1;
      if (split < 0 || bytes.length < 2) {
        socket.write(bytes);
      } else {
        const at = Math.max(1, Math.min(bytes.length - 1, Math.floor(split * bytes.length)));
        socket.write(bytes.subarray(0, at));
        setImmediate(() => {
          if (!socket.destroyed) socket.write(bytes.subarray(at));
        });
      }
    };
    const delayOf = (g: number) => plan.delayMs?.[g] ?? -1;
    const writeNext = () => {
      group++;
      writeGroup();
      scheduleDelayed();
    };
    // A group with a delay goes that long after the previous write, answered or not.
    const scheduleDelayed = () => {
      const next = group + 1;
      if (next >= plan.groups.length || delayOf(next) < 0) return;
      setTimeout(() => {
        if (!socket.destroyed && !socket.writableEnded && group === next - 1) writeNext();
      }, delayOf(next));
    };
    const advance = () => {
      // The answers to the group written so far are in: write the next group (unless it goes on a timer), or end.
      while (!socket.destroyed && run.answers.length >= run.written) {
        if (group >= plan.groups.length - 1) {
          socket.end();
          return;
        }
        if (delayOf(group + 1) >= 0) return;
        writeNext();
      }
    };
    socket.on("connect", () => {
      armStall();
      writeGroup();
      scheduleDelayed();
    });
    socket.on("data", (chunk: Buffer) => {
      armStall();
      reader.push(chunk);
      if (reader.error) {
        socket.destroy();
        return;
      }
      advance();
    });
    socket.on("end", () => socket.end());
    socket.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "ECONNRESET") run.reset = true;
    });
    socket.on("close", finish);
  });
}
