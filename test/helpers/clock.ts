import { installClock } from "../../src/lib/clock";

// The tests' clock: the system clock until a test pins it, then exactly where the test puts
// it. Installed into src/lib/clock.ts when this module loads (the setup file imports it, so
// every test file has it) and reset after each test (test/helpers/apply-migrations.ts).

let pinned: number | null = null;

installClock(() => pinned ?? Date.now());

export const testClock = {
  /** Pins "now" at this instant (epoch ms, a Date or an ISO string). */
  set(at: number | Date | string): void {
    pinned = typeof at === "number" ? at : new Date(at).getTime();
  },
  /** Moves "now" forward (from the pinned instant, or from the real time if none). */
  advance(ms: number): void {
    pinned = (pinned ?? Date.now()) + ms;
  },
  /** The pinned instant, or null while the system clock runs. */
  pinned(): number | null {
    return pinned;
  },
  /** Back to the system clock. */
  reset(): void {
    pinned = null;
  },
};
