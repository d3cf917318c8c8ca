/**
 * Every time-dependent decision in the gateway (code, token and Date-header
 * expiry) reads the time through a Clock, so tests can move time forward
 * instead of sleeping.
 */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

/** A clock for tests: starts at `start` and moves only when told to. */
export interface ManualClock {
  (): Date;
  advance(seconds: number): void;
  set(date: Date): void;
}

export function manualClock(start: Date = new Date()): ManualClock {
  let current = start.getTime();
  const clock = (() => new Date(current)) as ManualClock;
  clock.advance = (seconds) => {
    current += seconds * 1000;
  };
  clock.set = (date) => {
    current = date.getTime();
  };
  return clock;
}

export function unixSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}
