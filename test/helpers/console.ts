import { vi } from "vitest";

/**
 * Keeps out of the test output the log lines a test provokes on purpose (a simulated outage:
 * a queue down, D1 unavailable, a room's broken storage), so the output shows only what nobody
 * expected. Every other line still goes through. The spy is restored after the test (the setup
 * file); the answer lists the lines kept out, for a test that asserts the failure was reported.
 */
export function expectLogs(level: "error" | "warn", pattern: RegExp): string[] {
  const original = console[level].bind(console);
  const kept: string[] = [];
  vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
    const line = args.map((a) => (typeof a === "string" ? a : String(a))).join(" ");
    if (pattern.test(line)) kept.push(line);
    else original(...args);
  });
  return kept;
}
