import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { call, expectOk, unique } from "../helpers/api";
import { testClock } from "../helpers/clock";
import { addMember, addQueue, createOrganization, createQueueFixture, registerUser, type TestUser } from "../helpers/fixtures";

// A fast-check model run of desk calls across queues (docs/desks.md, issue #19 acceptance):
// 3 desks with overlapping profiles over 2 queues (D1: A+B, D2: B+A, D3: B only), random
// queue weights on D1 and D2, a random starting line, then waves of concurrent HTTP requests
// mixing desk call-nexts with joins (regular and VIP), cancels and transfers between the two
// queues. The clock is pinned during a wave, so every request of a wave happens at the same
// instant `at` (the desk rule's weighted waits are ranked at that instant), and moves between
// waves. After each wave, from the answers and a full read of both queues:
//  - no ticket called twice (over the whole run), every call answered with its desk;
//  - none lost: the tickets listed are exactly those created, each once, each in the one state
//    the successful operations leave it in (cancelled, transferred = cancelled with its new
//    ticket's id, called, or waiting); the counts per state add up to the total;
//  - the rule (the invariant of the 60-call wave test in desks.test.ts): a ticket a desk called
//    ranks, by the documented rule at the wave's instant, before every ticket of that desk's
//    queues that was waiting before the wave and still is after it, untouched by a cancel or
//    transfer of the wave (it was callable the whole time, so it was in the running when the
//    call was made);
//  - QUEUE_EMPTY only when nothing callable remained: never while such a ticket sat in one of
//    the desk's queues.
//
// Reproducible: the seed is fixed (change SEED to explore other cases). On a failure fast-check
// prints the seed, the path and the counterexample; the run is not shrunk (each case builds a
// world over HTTP, and concurrent interleavings are not replayed exactly anyway).

const SEED = 19_0519;
const RUNS = 8;

type QueueIndex = 0 | 1;
type Op =
  | { kind: "call"; desk: 0 | 1 | 2 }
  | { kind: "join"; queue: QueueIndex; vip: boolean }
  | { kind: "cancel"; pick: number }
  | { kind: "transfer"; pick: number; prioritize: boolean };

const queueArb = fc.constantFrom<QueueIndex>(0, 1);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant("call" as const), desk: fc.constantFrom<0 | 1 | 2>(0, 1, 2) }), weight: 5 },
  {
    arbitrary: fc.record({ kind: fc.constant("join" as const), queue: queueArb, vip: fc.integer({ min: 0, max: 3 }).map((n) => n === 0) }),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant("cancel" as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant("transfer" as const), pick: fc.nat(), prioritize: fc.boolean() }), weight: 1 },
);
const weightArb = fc.option(fc.integer({ min: 1, max: 10 }), { nil: undefined });
const scenarioArb = fc.record({
  initial: fc.array(fc.record({ queue: queueArb, vip: fc.integer({ min: 0, max: 4 }).map((n) => n === 0) }), {
    minLength: 4,
    maxLength: 18,
  }),
  weights: fc.tuple(fc.tuple(weightArb, weightArb), fc.tuple(weightArb, weightArb)),
  waves: fc.array(
    fc.record({ pauseMs: fc.constantFrom(0, 1, 700, 4_000, 15_000), ops: fc.array(opArb, { minLength: 1, maxLength: 10 }) }),
    {
      minLength: 1,
      maxLength: 4,
    },
  ),
});
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer S> ? S : never;

/** What the rule needs of a ticket, all of it in the public record. */
interface Seen {
  id: string;
  queueId: string;
  status: string;
  isPriority: boolean;
  createdAt: string;
  number: number;
  transferredToId: string | null;
}

interface Desk {
  id: string;
  queueIds: string[];
  weights: Record<string, number>;
  operator: TestUser;
}

interface World {
  owner: TestUser;
  queues: [string, string];
  desks: Desk[];
}

async function world(s: Scenario): Promise<World> {
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "banking" });
  const f = await createQueueFixture(owner, org.id);
  const queues: [string, string] = [f.queueId, await addQueue(f)];
  const operators = await Promise.all([0, 1, 2].map(() => addMember(owner, org.id, "operator")));
  const weightsOf = ([wa, wb]: [number | undefined, number | undefined], order: [string, string]) =>
    Object.fromEntries(
      [
        [order[0], wa],
        [order[1], wb],
      ].filter(([, v]) => v !== undefined),
    ) as Record<string, number>;
  const profiles: { queueIds: string[]; weights: Record<string, number> }[] = [
    { queueIds: [queues[0], queues[1]], weights: weightsOf(s.weights[0], [queues[0], queues[1]]) },
    { queueIds: [queues[1], queues[0]], weights: weightsOf(s.weights[1], [queues[1], queues[0]]) },
    { queueIds: [queues[1]], weights: {} },
  ];
  const desks: Desk[] = [];
  for (const [i, p] of profiles.entries()) {
    const d = expectOk(
      await call("POST", `/v1/locations/${f.locationId}/desks`, { token: owner.token, body: { name: unique("Guichet "), ...p } }),
      201,
    );
    expect(d.weights).toEqual(p.weights);
    expectOk(await call("POST", `/v1/desks/${d.id}/open`, { token: operators[i]!.token }));
    desks.push({ id: d.id, queueIds: p.queueIds, weights: p.weights, operator: operators[i]! });
  }
  return { owner, queues, desks };
}

/** Every ticket of both queues, each listed once, by the API (pages of 100). */
async function readAll(w: World): Promise<Map<string, Seen>> {
  const all = new Map<string, Seen>();
  for (const q of w.queues) {
    for (let offset = 0; ; offset += 100) {
      const res = await call("GET", `/v1/queues/${q}/tickets?limit=100&offset=${offset}`, { token: w.owner.token });
      const page = expectOk(res) as Seen[];
      for (const t of page) {
        expect(all.has(t.id), `${t.id} listed twice`).toBe(false);
        expect(t.queueId).toBe(q);
        all.set(t.id, t);
      }
      if (offset + 100 >= res.body.meta.total) break;
    }
  }
  return all;
}

/** The documented rule (docs/desks.md) at instant `at`, for desk `d`: is `x` called before `y`? */
function rankedBefore(d: Desk, at: number, x: Seen, y: Seen): boolean {
  const lane = (t: Seen) => (t.isPriority ? 0 : 1);
  if (lane(x) !== lane(y)) return lane(x) < lane(y);
  const wait = (t: Seen) => (at - Date.parse(t.createdAt)) * (d.weights[t.queueId] ?? 1);
  if (wait(x) !== wait(y)) return wait(x) > wait(y);
  if (x.queueId !== y.queueId) return x.queueId < y.queueId;
  // Within a queue and a lane the order key follows the ticket number (no restore nor return here).
  return x.number < y.number;
}

const seen = (t: any): Seen => ({
  id: t.id,
  queueId: t.queueId,
  status: t.status,
  isPriority: t.isPriority,
  createdAt: t.createdAt,
  number: t.number,
  transferredToId: t.transferredToId ?? null,
});

/** What the runs exercised, so a run that never called, emptied, cancelled or transferred is seen. */
const exercised = { calls: 0, empty: 0, cancels: 0, transfers: 0, checks: 0 };

async function play(s: Scenario, base: number): Promise<void> {
  testClock.set(base);
  const w = await world(s);
  const other = (q: string) => (q === w.queues[0] ? w.queues[1] : w.queues[0]);
  let at = base;
  for (const t of s.initial) {
    at += 1_000;
    testClock.set(at);
    const path = `/v1/queues/${w.queues[t.queue]}/${t.vip ? "vip-ticket" : "operator-join"}`;
    expectOk(await call("POST", path, { token: w.owner.token, body: {} }), 201);
  }
  let before = await readAll(w);
  expect(before.size).toBe(s.initial.length);
  const calledEver = new Set<string>();
  // The state each ticket is expected in; a key per ticket ever created.
  const expected = new Map<string, { status: string; transferredToId: string | null }>();
  for (const t of before.values()) expected.set(t.id, { status: "waiting", transferredToId: null });

  // After the random waves, a drain wave: D1 and D2 (both queues) call 6 more times than there
  // are tickets waiting, all at once: every one of them called, exactly 6 × QUEUE_EMPTY.
  const drainWave = (): Scenario["waves"][number] => {
    const waiting = [...before.values()].filter((t) => t.status === "waiting").length;
    return { pauseMs: 700, ops: Array.from({ length: waiting + 6 }, (_, i) => ({ kind: "call" as const, desk: (i % 2) as 0 | 1 })) };
  };
  for (let i = 0; i <= s.waves.length; i++) {
    const draining = i === s.waves.length;
    const wave = draining ? drainWave() : s.waves[i]!;
    at += 1_000 + wave.pauseMs;
    testClock.set(at);
    const known = [...before.values()].sort((x, y) => (x.id < y.id ? -1 : 1));
    const target = (pick: number) => (known.length === 0 ? null : known[pick % known.length]!);
    const answers = await Promise.all(
      wave.ops.map(async (op) => {
        if (op.kind === "call") {
          const d = w.desks[op.desk]!;
          return { op, d, res: await call("POST", `/v1/desks/${d.id}/call-next`, { token: d.operator.token }) };
        }
        if (op.kind === "join") {
          const path = `/v1/queues/${w.queues[op.queue]}/${op.vip ? "vip-ticket" : "operator-join"}`;
          return { op, res: await call("POST", path, { token: w.owner.token, body: {} }) };
        }
        const t = target(op.pick);
        if (t === null) return { op, res: null };
        if (op.kind === "cancel") return { op, t, res: await call("POST", `/v1/tickets/${t.id}/cancel`, { token: w.owner.token }) };
        const body = { targetQueueId: other(t.queueId), prioritize: op.prioritize };
        return { op, t, res: await call("POST", `/v1/tickets/${t.id}/transfer-queue`, { token: w.owner.token, body }) };
      }),
    );
    const touched = new Set<string>();
    const cancelledNow = new Set<string>();
    const transferredNow = new Map<string, string>();
    const calls: { d: Desk; t: Seen }[] = [];
    const empties: Desk[] = [];
    for (const a of answers) {
      const res = a.res;
      if (res === null) continue;
      const where = `${a.op.kind} → ${res.status} ${JSON.stringify(res.body)}`;
      if (a.op.kind === "call") {
        const d = (a as { d: Desk }).d;
        if (res.status === 200) {
          const t = seen(res.body.data);
          expect(calledEver.has(t.id), `called twice: ${where}`).toBe(false);
          calledEver.add(t.id);
          expect(res.body.data, where).toMatchObject({ status: "called", deskId: d.id, assignedToId: d.operator.id });
          expect(d.queueIds).toContain(t.queueId);
          calls.push({ d, t });
        } else {
          expect([res.status, res.body.error?.code], where).toEqual([409, "QUEUE_EMPTY"]);
          empties.push(d);
        }
      } else if (a.op.kind === "join") {
        expect(res.status, where).toBe(201);
        expected.set(res.body.data.id, { status: "waiting", transferredToId: null });
      } else {
        const t = (a as { t: Seen }).t;
        touched.add(t.id);
        if (res.status === 200 && a.op.kind === "cancel") {
          expect(res.body.data.status, where).toBe("cancelled");
          cancelledNow.add(t.id);
        } else if (res.status === 200) {
          const moved = res.body.data;
          expect(moved.queueId, where).toBe(other(t.queueId));
          // Priority when it was, or when the transfer prioritized it. Two transfers of one ticket at
          // once may both answer with the same hand-off's ticket, admitted with either's flag.
          const flags = wave.ops
            .filter((o) => o.kind === "transfer" && target(o.pick)?.id === t.id)
            .map((o) => (o as { prioritize: boolean }).prioritize);
          const possible = new Set(flags.map((p) => p || t.isPriority));
          expect(possible.has(moved.isPriority), where).toBe(true);
          const earlier = transferredNow.get(t.id);
          if (earlier !== undefined) expect(moved.id, where).toBe(earlier);
          transferredNow.set(t.id, moved.id);
          if (!expected.has(moved.id)) expected.set(moved.id, { status: "waiting", transferredToId: null });
        } else {
          expect(res.status, where).toBe(409);
          expect(["INVALID_STATE", "CONFLICT"], where).toContain(res.body.error.code);
        }
      }
    }

    // The state each ticket must be in now.
    for (const id of cancelledNow) expect(transferredNow.has(id), `${id} both cancelled and transferred`).toBe(false);
    for (const { t } of calls) expect(expected.has(t.id), `called an unknown ticket ${t.id}`).toBe(true);
    for (const [id, e] of expected) {
      if (e.status === "cancelled") continue;
      if (transferredNow.has(id)) expected.set(id, { status: "cancelled", transferredToId: transferredNow.get(id)! });
      else if (cancelledNow.has(id)) expected.set(id, { status: "cancelled", transferredToId: null });
      else if (calledEver.has(id)) expected.set(id, { status: "called", transferredToId: null });
    }
    for (const { t } of calls) {
      const was = before.get(t.id);
      expect(was === undefined || was.status === "waiting", `called ${t.id}, which was ${was?.status} before the wave`).toBe(true);
    }

    const after = await readAll(w);
    // None lost, none invented, each in the one state the operations leave it in.
    expect([...after.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [id, e] of expected) {
      const t = after.get(id)!;
      expect({ id, status: t.status, transferredToId: t.transferredToId }).toEqual({ id, ...e });
    }
    // The counts add up: per state as expected, and waiting + called + cancelled = every ticket created.
    const tally = (states: Iterable<{ status: string }>) => {
      const n: Record<string, number> = {};
      for (const { status } of states) n[status] = (n[status] ?? 0) + 1;
      return n;
    };
    const counts = tally(after.values());
    expect(counts).toEqual(tally(expected.values()));
    expect((counts.waiting ?? 0) + (counts.called ?? 0) + (counts.cancelled ?? 0)).toBe(expected.size);
    // Numbers stay unique within each queue.
    for (const q of w.queues) {
      const numbers = [...after.values()].filter((t) => t.queueId === q).map((t) => t.number);
      expect(new Set(numbers).size).toBe(numbers.length);
    }

    // Callable from before to after the wave, untouched by it: in the running for every call of the wave.
    const stable = [...after.values()].filter(
      (t) => t.status === "waiting" && before.get(t.id)?.status === "waiting" && !touched.has(t.id),
    );
    for (const { d, t } of calls) {
      for (const u of stable.filter((u) => d.queueIds.includes(u.queueId))) {
        expect(
          rankedBefore(d, at, t, u),
          `desk ${w.desks.indexOf(d) + 1} called ${t.id} (${JSON.stringify(t)}) before ${JSON.stringify(u)}`,
        ).toBe(true);
      }
    }
    exercised.calls += calls.length;
    exercised.empty += empties.length;
    exercised.cancels += cancelledNow.size;
    exercised.transfers += transferredNow.size;
    exercised.checks += calls.reduce((n, { d }) => n + stable.filter((u) => d.queueIds.includes(u.queueId)).length, 0);
    for (const d of empties) {
      const waiting = stable.filter((u) => d.queueIds.includes(u.queueId));
      expect(
        waiting.map((u) => u.id),
        `QUEUE_EMPTY at desk ${w.desks.indexOf(d) + 1} with tickets waiting`,
      ).toEqual([]);
    }
    if (draining) {
      expect(empties, "QUEUE_EMPTY answers of the drain wave").toHaveLength(6);
      expect([...after.values()].filter((t) => t.status === "waiting")).toEqual([]);
    }
    before = after;
  }
}

describe("desk calls across queues: a fast-check model run over HTTP", () => {
  it("no ticket called twice, none lost, every call first by the rule at its instant, QUEUE_EMPTY only when none was callable", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        run += 1;
        // Each case on its own day, so no two cases share an instant.
        await play(s, Date.UTC(2026, 2, 1, 9) + run * 86_400_000);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    expect(run).toBe(RUNS);
    // The cases did exercise every kind of step (the seed is fixed, so this is stable).
    expect(exercised.calls).toBeGreaterThan(20);
    expect(exercised.empty).toBeGreaterThan(0);
    expect(exercised.cancels).toBeGreaterThan(0);
    expect(exercised.transfers).toBeGreaterThan(0);
    expect(exercised.checks).toBeGreaterThan(50);
    console.log(`desk model: ${RUNS} runs (seed ${SEED}): ${JSON.stringify(exercised)}`);
  }, 600_000);
});
