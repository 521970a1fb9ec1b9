import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { database } from "../../src/db/client";
import { depsOf } from "../../src/http/deps";
import {
  anonymiseNotificationDeliveries,
  anonymiseTickets,
  anonymiseWebhookDeliveries,
  deleteVisitorPush,
} from "../../src/jobs/anonymisation";
import { newId } from "../../src/lib/ids";
import { now } from "../../src/lib/clock";
import { call, expectError, expectOk } from "../helpers/api";
import { room, settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { createApiKey, queueFixture, type Fixture } from "../helpers/fixtures";
import { sweep } from "../helpers/cron";

// Personal data (visitor names and phones, delivery addresses) is anonymised by the cron sweep
// once older than the organization's retention (default 90 days); nothing else changes.

const DAY = 86_400_000;

type Org = Fixture & { key: string };

async function org(): Promise<Org> {
  const f = await queueFixture("pro");
  return { ...f, key: (await createApiKey(f.owner, f.organizationId, ["admin"])).key };
}

/** A served walk-in named `name`, with what the notification and webhook consumers would have stored for it. */
async function servedVisitor(o: Org, name: string): Promise<{ id: string; deliveryKey: string; webhookDeliveryId: string }> {
  const t = expectOk(await call("POST", `/v1/queues/${o.queueId}/operator-join`, { apiKey: o.key, body: { visitorName: name } }), 201);
  expectOk(await call("POST", `/v1/queues/${o.queueId}/call-next`, { apiKey: o.key }));
  expectOk(await call("POST", `/v1/tickets/${t.id}/serve`, { apiKey: o.key }));
  expectOk(await call("POST", `/v1/tickets/${t.id}/complete`, { apiKey: o.key }));
  await settle(o.queueId);
  const at = now();
  const eventId = newId("evt");
  const phone = "+33612345678";
  const deliveryKey = `${eventId}:sms:${phone}`;
  const webhookId = newId("whk");
  const webhookDeliveryId = newId("dlv");
  const body = { id: eventId, type: "ticket.called", data: { phone, displayCode: t.displayCode, ticketId: t.id } };
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO notification_deliveries (key, id, event_id, organization_id, type, channel, recipient, provider, status, attempts, payload, provider_response, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'ticket.called', 'sms', ?, 'sandbox', 'sent', 1, ?, '{"to":"${phone}"}', ?, ?)`,
    ).bind(
      deliveryKey,
      newId("dlv"),
      eventId,
      o.organizationId,
      phone,
      JSON.stringify({ target: { kind: "phone", phone }, title: "", body: `${name}, your turn` }),
      at,
      at,
    ),
    env.DB.prepare(
      `INSERT INTO webhooks (id, organization_id, url, events, secret, created_at, updated_at) VALUES (?, ?, 'https://hooks.example/x', '["appointment.confirmed"]', 'whsec_x', ?, ?)`,
    ).bind(webhookId, o.organizationId, at, at),
    env.DB.prepare(
      `INSERT INTO webhook_deliveries (id, webhook_id, organization_id, event_id, event_type, payload, status, attempts, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'ticket.called', ?, 'succeeded', 1, ?, ?)`,
    ).bind(webhookDeliveryId, webhookId, o.organizationId, eventId, JSON.stringify(body), at, at),
    env.DB.prepare(
      `INSERT INTO visitor_push_subscriptions (ticket_id, endpoint, organization_id, p256dh, auth, language, created_at)
       VALUES (?, 'https://push.example/visitor', ?, 'key', 'auth', 'fr', ?)`,
    ).bind(t.id, o.organizationId, at),
  ]);
  return { id: t.id, deliveryKey, webhookDeliveryId };
}

async function personalData(organizationId: string) {
  const [tickets, deliveries, hooks, push] = await env.DB.batch<any>([
    env.DB.prepare("SELECT id, visitor_name, status, served_at, created_at FROM tickets WHERE organization_id = ? ORDER BY id").bind(
      organizationId,
    ),
    env.DB.prepare("SELECT key, recipient, payload, provider_response, status FROM notification_deliveries WHERE organization_id = ?").bind(
      organizationId,
    ),
    env.DB.prepare("SELECT id, payload FROM webhook_deliveries WHERE organization_id = ?").bind(organizationId),
    env.DB.prepare("SELECT ticket_id FROM visitor_push_subscriptions WHERE organization_id = ?").bind(organizationId),
  ]);
  return { tickets: tickets!.results, deliveries: deliveries!.results, hooks: hooks!.results, push: push!.results };
}

async function aggregates(organizationId: string) {
  const [hourly, facts] = await env.DB.batch<any>([
    env.DB.prepare("SELECT * FROM analytics_hourly WHERE organization_id = ? ORDER BY queue_id, hour_start").bind(organizationId),
    env.DB.prepare("SELECT * FROM analytics_ticket_facts WHERE organization_id = ? ORDER BY ticket_id").bind(organizationId),
  ]);
  return { hourly: hourly!.results, facts: facts!.results };
}

describe("personal-data anonymisation", () => {
  it("after the retention period (90 days by default, or as set) names, phones and delivery addresses are anonymised; figures stay", async () => {
    testClock.set("2026-01-10T09:00:00.000Z");
    const byDefault = await org();
    const short = await org();
    // The retention is the organization's own setting, within documented bounds.
    expect(expectOk(await call("GET", `/v1/organizations/${short.organizationId}`, { token: short.owner.token })).dataRetentionDays).toBe(
      90,
    );
    expectError(
      await call("PATCH", `/v1/organizations/${short.organizationId}`, { token: short.owner.token, body: { dataRetentionDays: 6 } }),
      400,
      "VALIDATION_ERROR",
      "dataRetentionDays",
    );
    expectError(
      await call("PATCH", `/v1/organizations/${short.organizationId}`, { token: short.owner.token, body: { dataRetentionDays: 3651 } }),
      400,
      "VALIDATION_ERROR",
      "dataRetentionDays",
    );
    const patched = expectOk(
      await call("PATCH", `/v1/organizations/${short.organizationId}`, { token: short.owner.token, body: { dataRetentionDays: 30 } }),
    );
    expect(patched.dataRetentionDays).toBe(30);

    const a = await servedVisitor(byDefault, "Awa Diallo");
    const b = await servedVisitor(short, "Jean Dupont");
    const before = { a: await personalData(byDefault.organizationId), b: await personalData(short.organizationId) };
    const aggregatesBefore = await aggregates(short.organizationId);
    expect(aggregatesBefore.hourly.length).toBeGreaterThan(0);
    expect(before.a.tickets[0].visitor_name).toBe("Awa Diallo");

    // Day 29: nothing is due anywhere.
    testClock.advance(29 * DAY);
    await sweep(now());
    expect(await personalData(short.organizationId)).toEqual(before.b);

    // Day 31: the 30-day organization is anonymised, the 90-day one is not.
    testClock.advance(2 * DAY);
    await sweep(now());
    const shortAfter = await personalData(short.organizationId);
    expect(shortAfter.tickets).toEqual([{ ...before.b.tickets[0], visitor_name: null }]);
    expect(shortAfter.deliveries).toHaveLength(1);
    expect(shortAfter.deliveries[0]).toMatchObject({ recipient: "(anonymised)", provider_response: null, status: "sent" });
    expect(shortAfter.deliveries[0].key).not.toContain("+336");
    expect(JSON.stringify(shortAfter.deliveries)).not.toMatch(/\+33612345678|Jean/);
    expect(JSON.parse(shortAfter.hooks[0].payload)).toMatchObject({ data: { phone: null, ticketId: b.id } });
    expect(shortAfter.push).toEqual([]);
    expect(await personalData(byDefault.organizationId)).toEqual(before.a);
    // The analytics aggregates are not touched.
    expect(await aggregates(short.organizationId)).toEqual(aggregatesBefore);

    // The archived ticket, read back through the API, shows no name any more.
    await runDurableObjectAlarm(room(short.queueId));
    const read = expectOk(await call("GET", `/v1/tickets/${b.id}`, { apiKey: short.key }));
    expect(read).toMatchObject({ id: b.id, status: "served", visitorName: null });

    // Day 91: the default organization's turn. A second run changes nothing more.
    testClock.advance(60 * DAY);
    await sweep(now());
    const defaultAfter = await personalData(byDefault.organizationId);
    expect(defaultAfter.tickets).toEqual([{ ...before.a.tickets[0], visitor_name: null }]);
    expect(JSON.stringify(defaultAfter)).not.toMatch(/\+33612345678|Awa/);
    await sweep(now());
    expect(await personalData(byDefault.organizationId)).toEqual(defaultAfter);
    expect(await personalData(short.organizationId)).toEqual(shortAfter);
    void a;
  });

  it("each statement walks organizations, then the partial index of rows still holding personal data", async () => {
    const plans: Record<string, string> = {};
    const db = database(env.DB);
    for (const [name, statement] of Object.entries({
      tickets: anonymiseTickets,
      notifications: anonymiseNotificationDeliveries,
      webhooks: anonymiseWebhookDeliveries,
      push: deleteVisitorPush,
    })) {
      const q = statement(depsOf(env), 0).toSQL();
      const rows = await env.DB.prepare(`EXPLAIN QUERY PLAN ${q.sql}`)
        .bind(...q.params)
        .all<{ detail: string }>();
      plans[name] = rows.results.map((r) => r.detail).join(" | ");
    }
    expect(plans.tickets).toMatch(/SEARCH d USING (COVERING )?INDEX tickets_named_org_created_idx/);
    expect(plans.notifications).toMatch(/SEARCH d USING (COVERING )?INDEX notification_deliveries_personal_idx/);
    expect(plans.webhooks).toMatch(/SEARCH d USING (COVERING )?INDEX webhook_deliveries_personal_idx/);
    expect(plans.push).toMatch(/SEARCH d USING (COVERING )?INDEX visitor_push_subscriptions_org_created_idx/);
    for (const plan of Object.values(plans)) expect(plan).not.toMatch(/SCAN d/);
  });
});
