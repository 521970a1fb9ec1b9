import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { call, expectOk } from "../helpers/api";
import { drained, settle } from "../helpers/catalog";
import { queueFixture, registerUser } from "../helpers/fixtures";

// The write path's cost per request, counted at the bindings (docs/benchmarks.md, "Write-path
// cost"): D1 round trips (each statement run alone, each batch once), D1 rows written (from
// D1's own `meta.rows_written`), Durable Object stubs taken (rooms and rate limiters), and the
// room's drain (D1 batches and queue sends) after a burst. The figures are printed for the
// table; the assertions hold what this file's subject guarantees: the drain is shared.

interface Cost {
  d1RoundTrips: number;
  d1Statements: number;
  d1RowsWritten: number;
  rooms: number;
  limiters: number;
}

function meter(): { cost: Cost; reset: () => void } {
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

afterEach(() => {
  vi.restoreAllMocks();
});

describe("write-path cost per request", () => {
  it("counts join, call-next, GET ticket, widget status and the drain of a burst", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    // Warm: the room configured, the first drain done, the analytics hour row made.
    expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    await settle(f.queueId);
    const { cost, reset } = meter();
    const rows: Record<string, Cost> = {};
    const measure = async (name: string, request: () => Promise<unknown>) => {
      reset();
      await request();
      rows[name] = { ...cost };
    };
    let ticketId = "";
    await measure("join", async () => {
      ticketId = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token }), 201).id;
    });
    await measure("drain of that join", async () => drained(f.queueId, 2_000));
    await measure("call-next", async () => expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token })));
    await measure("drain of that call-next", async () => drained(f.queueId, 2_000));
    await measure("GET ticket", async () => expectOk(await call("GET", `/v1/tickets/${ticketId}`, { token: customer.token })));
    await measure("widget status", async () => expectOk(await call("GET", `/v1/widget/queue/${f.queueId}/status`)));

    // A burst of 10 walk-ins: the drain is shared.
    reset();
    const burst = await Promise.all(
      Array.from({ length: 10 }, () => call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token })),
    );
    for (const r of burst) expectOk(r, 201);
    const before = { ...cost };
    await drained(f.queueId, 2_000);
    rows["drain of 10 joins at once"] = {
      d1RoundTrips: cost.d1RoundTrips - before.d1RoundTrips,
      d1Statements: cost.d1Statements - before.d1Statements,
      d1RowsWritten: cost.d1RowsWritten - before.d1RowsWritten,
      rooms: cost.rooms - before.rooms,
      limiters: cost.limiters - before.limiters,
    };
    console.log(
      ["| request | D1 round trips | D1 statements | D1 rows written | room stubs | limiter stubs |"]
        .concat(
          Object.entries(rows).map(
            ([name, c]) => `| ${name} | ${c.d1RoundTrips} | ${c.d1Statements} | ${c.d1RowsWritten} | ${c.rooms} | ${c.limiters} |`,
          ),
        )
        .join("\n"),
    );
    // One drain (one D1 batch) for the single join, and far fewer than ten for the burst.
    expect(rows["drain of that join"]!.d1RoundTrips).toBe(1);
    expect(rows["drain of 10 joins at once"]!.d1RoundTrips).toBeGreaterThan(0);
    expect(rows["drain of 10 joins at once"]!.d1RoundTrips).toBeLessThanOrEqual(3);
    expect(rows.join!.d1RoundTrips).toBeGreaterThan(0);
  });
});
