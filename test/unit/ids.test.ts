import { describe, expect, it } from "vitest";
import { newId, newTicketId, queueIdOfTicket } from "../../src/lib/ids";

// A ticket id is a bearer of its queue and must be unguessable: at least 96 random bits of its
// own beyond the queue id it embeds (issue 26: it had 60, docs/notifications.md promises 100).

describe("ticket ids", () => {
  it("carry at least 96 random bits after the queue id, and still name their queue", () => {
    const queueId = newId("que");
    const ticketId = newTicketId(queueId);
    const own = ticketId.slice(`tkt_${queueId.slice(4)}`.length);
    expect(own.length * 5).toBeGreaterThanOrEqual(96);
    expect(queueIdOfTicket(ticketId)).toBe(queueId);
    expect(new Set(Array.from({ length: 1000 }, () => newTicketId(queueId))).size).toBe(1000);
  });

  it("old ids (12 characters after the queue id) keep naming their queue", () => {
    const queueId = "que_0123456789abcdefghjk";
    expect(queueIdOfTicket("tkt_0123456789abcdefghjkmnpqrstvwxyz")).toBe(queueId);
    expect(queueIdOfTicket("tkt_0123456789abcdefghjk" + "0".repeat(20))).toBe(queueId);
    expect(queueIdOfTicket("tkt_0123456789abcdefghjk" + "0".repeat(15))).toBeNull();
    expect(queueIdOfTicket("tkt_0123456789abcdefghjk")).toBeNull();
  });
});
