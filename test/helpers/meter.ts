import { env } from "cloudflare:test";
import { vi } from "vitest";

// A meter at the bindings for the write path's cost (docs/benchmarks.md, "Write-path cost"):
// every `prepare(…).first/all/run/raw` is one D1 round trip, every `DB.batch` one round trip of
// N statements; rows written are D1's own `meta.rows_written`; Durable Object stubs taken from
// QUEUE_ROOM and RATE_LIMITER. Its spies are restored after the test (the setup file).

export interface Cost {
  d1RoundTrips: number;
  d1Statements: number;
  d1RowsWritten: number;
  rooms: number;
  limiters: number;
}

export function meter(): { cost: Cost; reset: () => void } {
  const cost: Cost = { d1RoundTrips: 0, d1Statements: 0, d1RowsWritten: 0, rooms: 0, limiters: 0 };
  const written = (result: unknown) => {
    const meta = (result as { meta?: { rows_written?: number } } | null)?.meta;
    cost.d1RowsWritten += meta?.rows_written ?? 0;
  };
  const prepare = env.DB.prepare.bind(env.DB);
  vi.spyOn(env.DB, "prepare").mockImplementation((query: string) => {
    const statement = prepare(query);
    for (const method of ["first", "all", "run", "raw"] as const) {
      const original = (statement as any)[method].bind(statement);
      (statement as any)[method] = async (...args: unknown[]) => {
        cost.d1RoundTrips += 1;
        cost.d1Statements += 1;
        const result = await original(...args);
        if (method !== "first" && method !== "raw") written(result);
        return result;
      };
    }
    const bind = statement.bind.bind(statement);
    (statement as any).bind = (...values: unknown[]) => {
      const bound = bind(...values);
      for (const method of ["first", "all", "run", "raw"] as const) {
        const original = (bound as any)[method].bind(bound);
        (bound as any)[method] = async (...args: unknown[]) => {
          cost.d1RoundTrips += 1;
          cost.d1Statements += 1;
          const result = await original(...args);
          if (method !== "first" && method !== "raw") written(result);
          return result;
        };
      }
      return bound;
    };
    return statement;
  });
  const batch = env.DB.batch.bind(env.DB);
  vi.spyOn(env.DB, "batch").mockImplementation(async (statements: D1PreparedStatement[]) => {
    cost.d1RoundTrips += 1;
    cost.d1Statements += statements.length;
    const results = await batch(statements);
    for (const r of results) written(r);
    return results;
  });
  const roomGet = env.QUEUE_ROOM.get.bind(env.QUEUE_ROOM);
  vi.spyOn(env.QUEUE_ROOM, "get").mockImplementation((id) => {
    cost.rooms += 1;
    return roomGet(id);
  });
  const limiterGet = env.RATE_LIMITER.get.bind(env.RATE_LIMITER);
  vi.spyOn(env.RATE_LIMITER, "get").mockImplementation((id) => {
    cost.limiters += 1;
    return limiterGet(id);
  });
  return {
    cost,
    reset: () => Object.assign(cost, { d1RoundTrips: 0, d1Statements: 0, d1RowsWritten: 0, rooms: 0, limiters: 0 }),
  };
}
