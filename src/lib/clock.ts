// The service's single source of "now": every rule that depends on time reads `now()`.
// Production reads the system clock. `installClock` is the one injection point for another
// time source; the tests install a movable one (test/helpers/clock.ts), nothing else does.

export type Clock = () => number;

const systemClock: Clock = () => Date.now();
let current: Clock = systemClock;

export function now(): number {
  return current();
}

/** Makes `clock` the time source; answers a function that puts the previous one back. */
export function installClock(clock: Clock): () => void {
  const previous = current;
  current = clock;
  return () => {
    current = previous;
  };
}
