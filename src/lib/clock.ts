// The service's single source of "now". Tests move it (only where the TEST_CLOCK binding is
// set) so that expiry, windows and sessions are checked without waiting in real time.
let pinned: number | null = null;

export function now(): number {
  return pinned ?? Date.now();
}

export const testClock = {
  set(ms: number | Date | string): void {
    pinned = typeof ms === "number" ? ms : new Date(ms).getTime();
  },
  advance(ms: number): void {
    pinned = now() + ms;
  },
  reset(): void {
    pinned = null;
  },
};
