import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareCandidates, pickCandidate, type DeskCandidate } from "../../src/domain/desks";

// The desk rule (src/domain/desks.ts): priority lane first, then longest waiting, ties by queue
// and place; the bound is the best head of another queue.

const head = (queueId: string, lane: number, linedUpAt: number, orderKey = 1): DeskCandidate => ({
  ticketId: `tkt_${queueId}_${orderKey}`,
  queueId,
  lane,
  linedUpAt,
  orderKey,
});

describe("desk rule", () => {
  it("puts a priority head first, then the one that waited longest, then by queue id", () => {
    expect(pickCandidate([head("que_a", 1, 10), head("que_b", 0, 50)])?.pick.queueId).toBe("que_b");
    expect(pickCandidate([head("que_a", 1, 10), head("que_b", 1, 5)])?.pick.queueId).toBe("que_b");
    expect(pickCandidate([head("que_b", 1, 5), head("que_a", 1, 5)])?.pick.queueId).toBe("que_a");
    expect(pickCandidate([null, null])).toBeNull();
  });

  it("answers as bound the best head of the other queues (null when there is none)", () => {
    const choice = pickCandidate([head("que_a", 1, 10), head("que_b", 1, 20), head("que_c", 1, 15)]);
    expect(choice?.pick.queueId).toBe("que_a");
    expect(choice?.bound?.queueId).toBe("que_c");
    expect(pickCandidate([head("que_a", 1, 10), null])?.bound).toBeNull();
  });

  it("is a total order: antisymmetric and transitive on any heads", () => {
    const arb = fc.record({
      queueId: fc.constantFrom("que_a", "que_b", "que_c"),
      lane: fc.constantFrom(0, 1),
      linedUpAt: fc.integer({ min: 0, max: 5 }),
      orderKey: fc.integer({ min: 0, max: 5 }),
      ticketId: fc.constant("t"),
    });
    fc.assert(
      fc.property(arb, arb, arb, (a, b, c) => {
        const same = a.queueId === b.queueId && a.lane === b.lane && a.linedUpAt === b.linedUpAt && a.orderKey === b.orderKey;
        if (!same) expect(Math.sign(compareCandidates(a, b))).toBe(-Math.sign(compareCandidates(b, a)));
        if (compareCandidates(a, b) < 0 && compareCandidates(b, c) < 0) expect(compareCandidates(a, c)).toBeLessThan(0);
      }),
    );
  });
});

describe("desk rule with queue weights", () => {
  const at = 1_000_000;
  it("ranks regular heads by wait × weight at the call's instant; priority still first", () => {
    // A waited 4 s × 3 = 12 beats B's 11 s; B's 13 s beats A's 12.
    const weighting = { at, weights: { que_a: 3 } };
    expect(pickCandidate([head("que_a", 1, at - 4_000), head("que_b", 1, at - 11_000)], weighting)?.pick.queueId).toBe("que_a");
    expect(pickCandidate([head("que_a", 1, at - 4_000), head("que_b", 1, at - 13_000)], weighting)?.pick.queueId).toBe("que_b");
    // Unweighted, the same heads go by the earliest linedUpAt.
    expect(pickCandidate([head("que_a", 1, at - 4_000), head("que_b", 1, at - 11_000)])?.pick.queueId).toBe("que_b");
    // A priority head first, whatever the weights.
    expect(pickCandidate([head("que_a", 1, at - 60_000), head("que_b", 0, at)], { at, weights: { que_a: 10 } })?.pick.queueId).toBe(
      "que_b",
    );
    // Equal weighted waits: by queue id.
    expect(pickCandidate([head("que_b", 1, at - 6_000), head("que_a", 1, at - 3_000)], { at, weights: { que_a: 2 } })?.pick.queueId).toBe(
      "que_a",
    );
  });

  it("with all weights 1 ranks exactly as the unweighted rule, at any instant", () => {
    const arb = fc.record({
      queueId: fc.constantFrom("que_a", "que_b"),
      lane: fc.constantFrom(0, 1),
      linedUpAt: fc.integer({ min: 0, max: 10 }),
      orderKey: fc.integer({ min: 0, max: 5 }),
      ticketId: fc.constant("t"),
    });
    fc.assert(
      fc.property(arb, arb, fc.integer({ min: 0, max: 20 }), (a, b, now) => {
        const ones = { at: now, weights: { que_a: 1, que_b: 1 } };
        expect(Math.sign(compareCandidates(a, b, ones))).toBe(Math.sign(compareCandidates(a, b)));
      }),
    );
  });

  it("keeps a queue's heads in its lane order at any one instant (what makes the bound exact)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 0, max: 10 }),
        fc.integer({ min: 0, max: 10 }),
        fc.integer({ min: 0, max: 30 }),
        (wa, wb, l1, dl, now) => {
          const weighting = { at: now, weights: { que_a: wa, que_b: wb } };
          // Along a lane linedUpAt never decreases and the order key grows: the earlier is never worse.
          expect(compareCandidates(head("que_a", 1, l1, 1), head("que_a", 1, l1 + dl, 2), weighting)).toBeLessThan(0);
        },
      ),
    );
  });
});
