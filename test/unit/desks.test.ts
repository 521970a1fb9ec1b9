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
