import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { depsOf } from "../../src/http/deps";
import { anonymiseTicketMessages, anonymiseTicketPhones } from "../../src/jobs/anonymisation";
import { now } from "../../src/lib/clock";
import { call, expectOk, unique } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { queueFixture, registerUser } from "../helpers/fixtures";
import { sweep } from "../helpers/cron";

// A ticket's phone (kept since conversations, docs/conversations.md) and the texts exchanged with
// it are personal data like the visitor's name: past the organization's retention the sweep
// clears them. An opt-out (STOP) is kept: it is the customer's own order not to be texted again.

const DAY = 86_400_000;

describe("the anonymisation sweep and a ticket's phone", () => {
  it("past the retention, the ticket's phone and its conversation's numbers and texts are gone; opt-outs stay", async () => {
    testClock.set("2026-02-01T09:00:00.000Z");
    const f = await queueFixture("pro");
    expectOk(await call("PATCH", `/v1/organizations/${f.organizationId}`, { token: f.owner.token, body: { dataRetentionDays: 30 } }));
    const customer = await registerUser({ accountType: "customer" });
    const phone = "+33612345679";
    const ticket = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: { phone } }), 201);
    await settle(f.queueId);
    const at = now();
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO ticket_messages (id, organization_id, ticket_id, queue_id, direction, channel, phone, body, created_at)
         VALUES (?, ?, ?, ?, 'in', 'sms', ?, 'Je suis garé devant, Jean Dupont', ?)`,
      ).bind(`msg_${unique()}`, f.organizationId, ticket.id, f.queueId, phone, at),
      env.DB.prepare("INSERT INTO opt_outs (organization_id, phone, channel, created_at) VALUES (?, ?, 'sms', ?)").bind(
        f.organizationId,
        phone,
        at,
      ),
    ]);
    const stored = async () => {
      const [tickets, messages, optOuts] = await env.DB.batch<any>([
        env.DB.prepare("SELECT id, phone FROM tickets WHERE organization_id = ?").bind(f.organizationId),
        env.DB.prepare("SELECT phone, body, direction FROM ticket_messages WHERE organization_id = ?").bind(f.organizationId),
        env.DB.prepare("SELECT phone FROM opt_outs WHERE organization_id = ?").bind(f.organizationId),
      ]);
      return { tickets: tickets!.results, messages: messages!.results, optOuts: optOuts!.results };
    };
    expect((await stored()).tickets).toEqual([{ id: ticket.id, phone }]);

    testClock.advance(29 * DAY);
    await sweep(now());
    expect((await stored()).messages).toEqual([{ phone, body: "Je suis garé devant, Jean Dupont", direction: "in" }]);

    testClock.advance(2 * DAY);
    await sweep(now());
    const after = await stored();
    expect(after.tickets).toEqual([{ id: ticket.id, phone: null }]);
    expect(after.messages).toEqual([{ phone: "(anonymised)", body: "(anonymised)", direction: "in" }]);
    expect(after.optOuts).toEqual([{ phone }]);
    // A second run finds nothing left to do.
    await sweep(now());
    expect(await stored()).toEqual(after);
  });

  it("both statements read only the partial indexes of rows still holding a phone", async () => {
    for (const [statement, index] of [
      [anonymiseTicketPhones, "tickets_phone_org_created_idx"],
      [anonymiseTicketMessages, "ticket_messages_personal_idx"],
    ] as const) {
      const q = statement(depsOf(env), 0).toSQL();
      const plan = (
        await env.DB.prepare(`EXPLAIN QUERY PLAN ${q.sql}`)
          .bind(...q.params)
          .all<{ detail: string }>()
      ).results
        .map((r) => r.detail)
        .join(" | ");
      expect(plan).toMatch(new RegExp(`SEARCH d USING (COVERING )?INDEX ${index}`));
      expect(plan).not.toMatch(/SCAN d/);
    }
  });
});

describe("the sweep and inbound threads (issue 44)", () => {
  it("a shared number's thread with a customer (their number, a held text) goes two days after its last message; a live one stays", async () => {
    const at = Date.parse("2026-03-10T09:00:00.000Z");
    const old = `+3361${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
    const live = `+3362${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
    const thread = (phone: string, updatedAt: number) =>
      env.DB.prepare(
        "INSERT INTO inbound_threads (phone, to_number, ticket_id, menu, pending_body, updated_at) VALUES (?, '+33700000000', NULL, '[]', 'Mon IBAN est FR76…', ?)",
      ).bind(phone, updatedAt);
    await env.DB.batch([thread(old, at - 2 * DAY - 60_000), thread(live, at - DAY)]);
    await sweep(at);
    const left = await env.DB.prepare("SELECT phone FROM inbound_threads WHERE phone IN (?, ?)").bind(old, live).all<{ phone: string }>();
    expect(left.results.map((r) => r.phone)).toEqual([live]);
  });
});
