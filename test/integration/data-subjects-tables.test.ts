import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { eraseDataSubject, exportDataSubject } from "../../src/privacy/data-subjects";
import { unique } from "../helpers/api";
import { queueFixture, registerUser } from "../helpers/fixtures";
import { depsOf } from "../../src/http/deps";

// A person's data on request across every table it reaches (docs/personal-data.md): a customer
// known by phone, e-mail and account is seeded in each table the export reads and the erasure
// changes (tickets by phone, by account and by appointment; appointments and their calendar
// event; texts; deliveries by number, account, device token and browser endpoint; phone codes;
// threads on an owned number and about a ticket; webhook bodies and events by number and by
// ticket; in-app notifications; scans; remote-join expiries; SMS counters; audit entries by
// entity and by the e-mail in their changes), beside rows of another organization and another
// person. The export lists each, as the API writes it; the erasure changes exactly those rows.

const origin = { actor: { type: "user" as const, id: null }, ip: null, requestId: null };

async function seed() {
  const phone = `+3361${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
  const customer = await registerUser({ accountType: "customer" });
  const email = customer.email;
  const f = await queueFixture("pro");
  const other = await queueFixture("pro");
  const org = f.organizationId;
  const at = Date.now() - 10 * 86_400_000;
  const loc = (await env.DB.prepare("SELECT location_id FROM service_locations WHERE service_id = ?").bind(f.serviceId).first<{
    location_id: string;
  }>())!.location_id;
  const id = (p: string) => `${p}_${unique()}`;
  const t1 = id("tkt"),
    t2 = id("tkt"),
    t3 = id("tkt"),
    t4 = id("tkt"),
    tOther = id("tkt");
  const ticket = (tid: string, o: string, q: string, s: string, userId: string, p: string | null, n: number) =>
    env.DB.prepare(
      `INSERT INTO tickets (id, queue_id, service_id, organization_id, user_id, number, display_code, status, party_size, is_priority, is_ghost_mode, source, visitor_name, created_at, updated_at, version, phone, intake, intake_personal, labels, note, outcome)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'served', 2, 0, 0, 'widget', 'Awa', ?, ?, 3, ?, '{"a":1}', '{"b":2}', '["vip"]', 'note', 'done')`,
    ).bind(tid, q, s, o, userId, n, `A-00${n}`, at + n, at + n + 5, p);
  const cal = id("cal");
  const hook = id("whk");
  const stmts = [
    ticket(t1, org, f.queueId, f.serviceId, "visitor", phone, 1),
    ticket(t2, org, f.queueId, f.serviceId, customer.id, null, 2),
    ticket(t3, org, f.queueId, f.serviceId, "visitor", null, 3),
    ticket(t4, org, f.queueId, f.serviceId, "someone", "+33699999999", 4),
    ticket(tOther, other.organizationId, other.queueId, other.serviceId, "visitor", phone, 5),
    env.DB.prepare(
      "INSERT INTO calendar_events (id, organization_id, title, description, start_at, end_at, event_type, attendees, created_at, updated_at) VALUES (?, ?, 'Appt', 'Awa, her number', ?, ?, 'appointment', '[]', ?, ?)",
    ).bind(cal, org, at, at + 1, at, at),
    env.DB.prepare(
      `INSERT INTO appointments (id, organization_id, service_id, location_id, start_at, end_at, status, customer_name, customer_phone, customer_email, notes, customer_user_id, calendar_event_id, token_hash, ticket_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'checked_in', 'Awa', NULL, ?, 'n', NULL, ?, 'hash', ?, ?, ?)`,
    ).bind(id("apt"), org, f.serviceId, loc, at + 100, at + 200, email, cal, t3, at, at),
    env.DB.prepare(
      `INSERT INTO appointments (id, organization_id, service_id, location_id, start_at, end_at, status, customer_name, customer_phone, customer_email, notes, customer_user_id, token_hash, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'cancelled', 'Awa', ?, NULL, NULL, ?, 'hash', ?, ?)`,
    ).bind(id("apt"), org, f.serviceId, loc, at + 50, at + 60, phone, customer.id, at, at),
    env.DB.prepare(
      "INSERT INTO ticket_messages (id, organization_id, ticket_id, queue_id, direction, channel, phone, body, created_at) VALUES (?, ?, ?, ?, 'in', 'sms', ?, 'hello', ?)",
    ).bind(id("msg"), org, t1, f.queueId, phone, at + 1),
    env.DB.prepare(
      "INSERT INTO ticket_messages (id, organization_id, ticket_id, queue_id, direction, channel, phone, body, created_at) VALUES (?, ?, ?, ?, 'out', 'sms', '+33700000001', 'reply', ?)",
    ).bind(id("msg"), org, t2, f.queueId, at + 2),
    env.DB.prepare("INSERT INTO push_devices (id, user_id, platform, token, created_at, updated_at) VALUES (?, ?, 'ios', ?, ?, ?)").bind(
      id("dev"),
      customer.id,
      `tok_${unique()}`,
      at,
      at,
    ),
    env.DB.prepare(
      "INSERT INTO visitor_push_subscriptions (ticket_id, endpoint, organization_id, p256dh, auth, language, created_at) VALUES (?, ?, ?, 'p', 'a', 'fr', ?)",
    ).bind(t1, `https://push.example.com/${unique()}`, org, at),
    env.DB.prepare(
      "INSERT INTO phone_verifications (ticket_id, organization_id, phone, language, code_hash, expires_at, verified_at, created_at, updated_at) VALUES (?, ?, ?, 'fr', 'h', ?, ?, ?, ?)",
    ).bind(t1, org, phone, at + 10, at + 5, at, at),
    env.DB.prepare(
      "INSERT INTO phone_verifications (ticket_id, organization_id, phone, language, code_hash, expires_at, created_at, updated_at) VALUES (?, ?, '+33600000002', 'fr', 'h', ?, ?, ?)",
    ).bind(t2, org, at + 10, at, at),
    env.DB.prepare("INSERT INTO sms_senders (number, organization_id, created_at) VALUES (?, ?, ?)").bind(`+3370${unique()}`, org, at),
    env.DB.prepare(
      "INSERT INTO inbound_threads (phone, to_number, ticket_id, menu, pending_body, updated_at) SELECT ?, number, NULL, '[{\"x\":1}]', 'pending', ? FROM sms_senders WHERE organization_id = ?",
    ).bind(phone, at, org),
    env.DB.prepare(
      "INSERT INTO inbound_threads (phone, to_number, ticket_id, menu, pending_body, updated_at) VALUES (?, ?, ?, NULL, NULL, ?)",
    ).bind(phone, `+3371${unique()}`, t1, at),
    env.DB.prepare(
      "INSERT INTO webhooks (id, organization_id, url, events, enabled, secret, created_at, updated_at) VALUES (?, ?, 'https://hooks.example.com/in', '[\"*\"]', 1, 'whsec_AAAA', 0, 0)",
    ).bind(hook, org),
    env.DB.prepare(
      "INSERT INTO webhook_deliveries (id, webhook_id, organization_id, event_id, event_type, payload, status, created_at, updated_at) VALUES (?, ?, ?, ?, 'ticket.created', ?, 'succeeded', ?, ?)",
    ).bind(id("wd"), hook, org, id("evt"), JSON.stringify({ data: { phone, visitorName: "Awa" } }), at + 1, at + 1),
    env.DB.prepare(
      "INSERT INTO webhook_deliveries (id, webhook_id, organization_id, event_id, event_type, payload, status, created_at, updated_at) VALUES (?, ?, ?, ?, 'ticket.called', ?, 'pending', ?, ?)",
    ).bind(id("wd"), hook, org, id("evt"), JSON.stringify({ data: { ticketId: t2, customerName: "Awa" } }), at + 2, at + 2),
    env.DB.prepare(
      "INSERT INTO organization_events (id, organization_id, type, queue_id, payload, recorded_at) VALUES (?, ?, 'ticket.created', ?, ?, ?)",
    ).bind(id("evt"), org, f.queueId, JSON.stringify({ data: { phoneMasked: "+33 6•• ", ticketId: t1 } }), at + 3),
    env.DB.prepare(
      "INSERT INTO organization_events (id, organization_id, type, queue_id, payload, recorded_at) VALUES (?, ?, 'ticket.created', ?, ?, ?)",
    ).bind(id("evt"), org, f.queueId, JSON.stringify({ data: { phone } }), at + 4),
    env.DB.prepare(
      "INSERT INTO notifications (id, user_id, organization_id, type, title, body, data, created_at) VALUES (?, ?, ?, 'ticket.called', 'T', 'B', ?, ?)",
    ).bind(id("ntf"), customer.id, org, JSON.stringify({ ticketId: t2 }), at),
    env.DB.prepare(
      "INSERT INTO entry_scans (id, user_id, organization_id, channel, source_id, queue_id, phone_model, scanned_at) VALUES (?, ?, ?, 'qr', 'qrt_x', ?, 'Pixel', ?)",
    ).bind(id("scn"), customer.id, org, f.queueId, at),
    env.DB.prepare(
      "INSERT INTO remote_join_expiries (ticket_id, user_id, organization_id, queue_id, expired_at) VALUES (?, ?, ?, ?, ?)",
    ).bind(t2, customer.id, org, f.queueId, at),
    env.DB.prepare("INSERT INTO sms_counters (organization_id, scope, subject, day, used) VALUES (?, 'phone', ?, '2026-01-01', 2)").bind(
      org,
      phone,
    ),
    env.DB.prepare("INSERT INTO sms_counters (organization_id, scope, subject, day, used) VALUES (?, 'phone', ?, '2026-01-01', 2)").bind(
      other.organizationId,
      phone,
    ),
    env.DB.prepare("INSERT INTO opt_outs (organization_id, phone, channel, created_at) VALUES (?, ?, 'sms', ?)").bind(org, phone, at),
    env.DB.prepare("INSERT INTO opt_outs (organization_id, phone, channel, created_at) VALUES (?, ?, 'sms', ?)").bind(
      other.organizationId,
      phone,
      at,
    ),
    env.DB.prepare(
      "INSERT INTO audit_events (id, organization_id, actor_type, actor_id, entity_type, entity_id, action, changes, created_at) VALUES (?, ?, 'user', NULL, 'ticket', ?, 'ticket.noted', '{}', ?)",
    ).bind(id("aud"), org, t1, at),
    env.DB.prepare(
      "INSERT INTO audit_events (id, organization_id, actor_type, actor_id, entity_type, entity_id, action, changes, created_at) VALUES (?, ?, 'user', NULL, 'member', 'x', 'member.updated', ?, ?)",
    ).bind(id("aud"), org, JSON.stringify({ email: { before: email, after: null } }), at + 1),
  ];
  const delivery = (channel: string, recipient: string, status: string, n: number) =>
    env.DB.prepare(
      "INSERT INTO notification_deliveries (key, id, event_id, organization_id, type, channel, recipient, provider, status, attempts, payload, provider_response, created_at, updated_at) VALUES (?, ?, ?, ?, 'ticket.called', ?, ?, 'x', ?, 1, ?, 'resp', ?, ?)",
    ).bind(id("key"), id("ndl"), id("evt"), org, channel, recipient, status, JSON.stringify({ to: recipient }), at + n, at + n);
  await env.DB.batch(stmts);
  const device = (await env.DB.prepare("SELECT token FROM push_devices WHERE user_id = ?").bind(customer.id).first<{ token: string }>())!;
  const endpoint = (await env.DB.prepare("SELECT endpoint FROM visitor_push_subscriptions WHERE ticket_id = ?")
    .bind(t1)
    .first<{ endpoint: string }>())!;
  await env.DB.batch([
    delivery("sms", phone, "sent", 1),
    delivery("in_app", customer.id, "pending", 2),
    delivery("push", device.token, "retrying", 3),
    delivery("web_push", endpoint.endpoint, "failed", 4),
    delivery("sms", "+33688888888", "sent", 5),
  ]);
  return { org, other: other.organizationId, subject: { phone, email }, at: at + 86_400_000 };
}

describe("a person's data in every table", () => {
  it("the export finds each seeded row, in the API's shape; the erasure changes exactly those; a second changes nothing", async () => {
    const s = await seed();
    const doc = await exportDataSubject(depsOf(env), s.org, s.subject, origin, s.at);
    const counts = Object.fromEntries(Object.entries(doc).flatMap(([k, v]) => (Array.isArray(v) ? [[k, v.length]] : [])));
    expect(counts).toEqual({
      accounts: 1,
      tickets: 3,
      appointments: 2,
      ticketMessages: 2,
      notificationDeliveries: 4,
      inAppNotifications: 1,
      optOuts: 1,
      visitorPushSubscriptions: 1,
      phoneVerifications: 2,
      inboundThreads: 2,
      webhookDeliveries: 2,
      events: 2,
      entryScans: 1,
      remoteJoinExpiries: 1,
      smsCounters: 1,
      auditEvents: 2,
    });
    // Keys in camelCase, times as ISO strings, JSON columns parsed, the manage token's hash left out.
    const isoTime = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(doc.appointments[0]).toMatchObject({ customerPhone: s.subject.phone, startAt: isoTime, createdAt: isoTime });
    expect(doc.appointments[1]).toMatchObject({ customerEmail: s.subject.email, ticketId: expect.any(String) });
    for (const a of doc.appointments) expect(a).not.toHaveProperty("tokenHash");
    expect(doc.notificationDeliveries.map((d) => d.channel)).toEqual(["sms", "in_app", "push", "web_push"]);
    expect(doc.notificationDeliveries[0]).toMatchObject({ payload: { to: s.subject.phone }, createdAt: isoTime });
    expect(doc.notificationDeliveries[0]).not.toHaveProperty("providerResponse");
    expect(doc.inAppNotifications[0]).toMatchObject({ data: { ticketId: expect.any(String) }, readAt: null });
    expect(doc.inboundThreads.map((t) => t.menu)).toContainEqual([{ x: 1 }]);
    expect(doc.webhookDeliveries[0]).toMatchObject({ eventType: "ticket.created", payload: { data: { phone: s.subject.phone } } });
    expect(doc.events.map((e) => e.payload)).toContainEqual({ data: { phone: s.subject.phone } });
    expect(doc.phoneVerifications).toContainEqual(expect.objectContaining({ phone: s.subject.phone, verifiedAt: isoTime }));
    expect(doc.smsCounters).toEqual([{ subject: s.subject.phone, day: "2026-01-01", used: 2 }]);
    expect(doc.auditEvents.map((e) => e.changes)).toContainEqual({ email: { before: s.subject.email, after: null } });
    expect(doc.tickets.map((t) => [t.heldIn, t.displayCode, t.labels, t.intakePersonal])).toEqual([
      ["history", "A-001", ["vip"], { b: 2 }],
      ["history", "A-002", ["vip"], { b: 2 }],
      ["history", "A-003", ["vip"], { b: 2 }],
    ]);

    const erased = await eraseDataSubject(depsOf(env), s.org, s.subject, origin, s.at);
    expect(erased).toMatchObject({
      tickets: 3,
      ticketsAnonymised: 3,
      ticketMessages: 2,
      notificationDeliveries: 4,
      webhookDeliveries: 2,
      events: 2,
      optOuts: 1,
      visitorPushSubscriptions: 1,
      phoneVerifications: 2,
      inboundThreads: 2,
      smsCounters: 1,
      inAppNotifications: 1,
      entryScans: 1,
      remoteJoinExpiries: 1,
      appointments: 2,
    });
    // A delivery still to send fails instead; the others keep their outcome; the key no longer holds the recipient.
    const deliveries = (
      await env.DB.prepare(
        "SELECT channel, status, recipient, payload, provider_response, key LIKE '%:(anonymised):%' AS anonymisedKey FROM notification_deliveries WHERE organization_id = ? ORDER BY created_at",
      )
        .bind(s.org)
        .all()
    ).results;
    expect(deliveries.slice(0, 4)).toEqual(
      ["sent", "failed", "failed", "failed"].map((status, i) => ({
        channel: ["sms", "in_app", "push", "web_push"][i],
        status,
        recipient: "(anonymised)",
        payload: '{"anonymised":true}',
        provider_response: null,
        anonymisedKey: 1,
      })),
    );
    // Another person's delivery and the other organization's rows stay.
    expect(deliveries[4]).toMatchObject({ recipient: "+33688888888", status: "sent", anonymisedKey: 0 });
    const elsewhere = await env.DB.prepare(
      "SELECT (SELECT COUNT(*) FROM opt_outs WHERE organization_id = ?1) AS optOuts, (SELECT COUNT(*) FROM sms_counters WHERE organization_id = ?1) AS counters, (SELECT phone FROM tickets WHERE organization_id = ?1) AS phone",
    )
      .bind(s.other)
      .first();
    expect(elsewhere).toEqual({ optOuts: 1, counters: 1, phone: s.subject.phone });
    const calendar = await env.DB.prepare("SELECT description FROM calendar_events WHERE organization_id = ?").bind(s.org).first();
    expect(calendar).toEqual({ description: null });

    const after = await exportDataSubject(depsOf(env), s.org, s.subject, origin, s.at);
    const left = Object.fromEntries(Object.entries(after).flatMap(([k, v]) => (Array.isArray(v) && v.length > 0 ? [[k, v.length]] : [])));
    // The account stays (it is not the organization's); the tickets stay, anonymised, no longer the
    // person's; audit entries are chained and never rewritten (docs/personal-data.md): the one
    // whose changes hold the e-mail is still found by it.
    expect(left).toEqual({ accounts: 1, auditEvents: 1 });
    const again = await eraseDataSubject(depsOf(env), s.org, s.subject, origin, s.at);
    expect(Object.entries(again).filter(([k, v]) => typeof v === "number" && v > 0 && k !== "tickets")).toEqual([]);
  });
});
