import { describe, expect, it } from "vitest";
import { call, expectOk } from "../helpers/api";
import { drained, settle } from "../helpers/catalog";
import { queueFixture, registerUser } from "../helpers/fixtures";
import { type Cost, meter } from "../helpers/meter";

// The write path's cost per request, counted at the bindings (docs/benchmarks.md, "Write-path
// cost"): D1 round trips (each statement run alone, each batch once), D1 rows written (from
// D1's own `meta.rows_written`), Durable Object stubs taken (rooms and rate limiters), and the
// room's drain (D1 batches and queue sends) after a burst. A measurement, not a test: it prints
// the table and runs with `npm run bench:write-path`, outside `npm test`. What of it is a
// guarantee (one batch per drain, a burst's drains shared) is asserted by
// test/integration/write-path-cost.test.ts.

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
    // The meter saw the requests (a table of zeros would mean it counted nothing).
    expect(rows.join!.d1RoundTrips).toBeGreaterThan(0);
  });
});
