import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { bookAppointment } from "../helpers/booked-appointments";
import { room, settle } from "../helpers/catalog";
import { acceptInvitation, addMember, createApiKey, queueFixture, registerUser, type Fixture } from "../helpers/fixtures";
import { capture, eventsOf, feedEvents, type Captured } from "../helpers/notifications";

// A person's data on request (docs/personal-data.md): a customer known by phone and e-mail is
// seeded across tickets (one finished, one still in the line), an appointment, texts, SMS
// deliveries and an opt-out, in two organizations. The export lists each record of the asking
// organization only; the erasure leaves no trace of the number, e-mail or name in any D1 table
// of that organization nor in its queue's room, keeps the analytics counts, and is audited
// without the data.

const DAY = 86_400_000;
const FIVE_MINUTES = 5 * 60_000;
let captured: Captured | null = null;
afterEach(() => {
  captured?.restore();
  captured = null;
});

function randomPhone(): string {
  return `+3361${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
}

interface Person {
  phone: string;
  email: string;
  name: string;
}

/** A widget visitor's join with name and phone (the organization's write key). */
async function visitorJoin(f: Fixture, key: string, p: Person): Promise<string> {
  // With an Idempotency-Key: the replayable answer (it holds the name and number) is kept for 24 h.
  const res = await call("POST", `/v1/widget/queue/${f.queueId}/join`, {
    apiKey: key,
    body: { visitorName: p.name, phone: p.phone },
    headers: { "Idempotency-Key": unique("join") },
  });
  return expectOk(res, 201).id as string;
}

/** Every row of every D1 table, as text, that holds one of the person's identifiers, with its organization. */
async function traces(p: Person): Promise<{ table: string; organizationId: unknown; row: string }[]> {
  const tables = (
    await env.DB.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%'",
    ).all<{ name: string }>()
  ).results.map((t) => t.name);
  const found: { table: string; organizationId: unknown; row: string }[] = [];
  for (const table of tables) {
    const rows = (await env.DB.prepare(`SELECT * FROM "${table}"`).all<Record<string, unknown>>()).results;
    for (const row of rows) {
      const text = JSON.stringify(row);
      if (text.includes(p.phone) || text.includes(p.email) || text.includes(p.name)) {
        found.push({ table, organizationId: row.organization_id ?? null, row: text });
      }
    }
  }
  return found;
}

async function analyticsTotals(organizationId: string) {
  return env.DB.prepare(
    "SELECT SUM(created) AS created, SUM(served) AS served, SUM(cancelled) AS cancelled, SUM(no_show) AS noShow FROM analytics_hourly WHERE organization_id = ?",
  )
    .bind(organizationId)
    .first();
}

async function seed() {
  const person: Person = { phone: randomPhone(), email: `${unique("awa")}@example.com`, name: `Awa ${unique("Diallo")}` };
  const a = await queueFixture("pro");
  const b = await queueFixture("pro");
  const keyA = (await createApiKey(a.owner, a.organizationId, ["write:queues"])).key;
  const keyB = (await createApiKey(b.owner, b.organizationId, ["write:queues"])).key;
  captured = capture();

  // A finished ticket, drained to D1, with its SMS deliveries; a text exchanged; an opt-out.
  const finished = await visitorJoin(a, keyA, person);
  expectOk(await call("POST", `/v1/tickets/${finished}/cancel`, { token: a.owner.token }));
  await feedEvents(await eventsOf(captured, a.queueId));
  const at = Date.now();
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO ticket_messages (id, organization_id, ticket_id, queue_id, direction, channel, phone, body, created_at)
       VALUES (?, ?, ?, ?, 'in', 'sms', ?, ?, ?)`,
    ).bind(`msg_${unique()}`, a.organizationId, finished, a.queueId, person.phone, `Je suis garé devant, ${person.name}`, at),
    env.DB.prepare("INSERT INTO opt_outs (organization_id, phone, channel, created_at) VALUES (?, ?, 'sms', ?)").bind(
      a.organizationId,
      person.phone,
      at,
    ),
    env.DB.prepare("INSERT INTO opt_outs (organization_id, phone, channel, created_at) VALUES (?, ?, 'sms', ?)").bind(
      b.organizationId,
      person.phone,
      at,
    ),
  ]);
  // A past appointment booked with the e-mail only (found by the e-mail, not the number).
  const location = (await env.DB.prepare("SELECT location_id FROM service_locations WHERE service_id = ?")
    .bind(a.serviceId)
    .first<{ location_id: string }>())!;
  const appointment = await bookAppointment({
    auth: { token: a.owner.token },
    serviceId: a.serviceId,
    locationId: location.location_id,
    startAt: Math.floor((Date.now() - 2 * DAY) / FIVE_MINUTES) * FIVE_MINUTES,
    customerName: person.name,
    customerEmail: person.email,
  });
  // A ticket still in the line, and the same person in another organization.
  const live = await visitorJoin(a, keyA, person);
  const elsewhere = await visitorJoin(b, keyB, person);
  await settle(b.queueId);
  return { person, a, b, finished, live, elsewhere, appointmentId: appointment.id };
}

describe("POST /v1/organizations/{id}/data-subjects/export and /erase", () => {
  it("exports every record of the person in this organization only; erasure leaves no trace there, counts unchanged, audited", async () => {
    const s = await seed();
    const { person, a, b } = s;
    const subject = { phone: person.phone, email: person.email };

    const exported = expectOk(
      await call("POST", `/v1/organizations/${a.organizationId}/data-subjects/export`, { token: a.owner.token, body: subject }),
    );
    expect(exported.tickets.map((t: any) => t.id).sort()).toEqual([s.finished, s.live].sort());
    const live = exported.tickets.find((t: any) => t.id === s.live);
    expect(live).toMatchObject({ heldIn: "room", status: "waiting", visitorName: person.name, phone: person.phone });
    expect(exported.tickets.find((t: any) => t.id === s.finished)).toMatchObject({ status: "cancelled", visitorName: person.name });
    expect(exported.appointments.map((x: any) => [x.id, x.customerName, x.customerEmail])).toEqual([
      [s.appointmentId, person.name, person.email],
    ]);
    expect(exported.appointments[0].tokenHash).toBeUndefined();
    expect(exported.ticketMessages.map((m: any) => m.ticketId)).toEqual([s.finished]);
    expect(exported.optOuts).toEqual([expect.objectContaining({ organizationId: a.organizationId, phone: person.phone })]);
    expect(exported.notificationDeliveries.some((d: any) => d.channel === "sms" && d.recipient === person.phone)).toBe(true);
    // Nothing of the other organization, though it knows the same number.
    const text = JSON.stringify(exported);
    expect(text).not.toContain(b.organizationId);
    expect(text).not.toContain(s.elsewhere);

    // A ticket still in the line: refused, nothing changed.
    const refused = await call("POST", `/v1/organizations/${a.organizationId}/data-subjects/erase`, {
      token: a.owner.token,
      body: subject,
    });
    expectError(refused, 409, "INVALID_STATE");
    expect(refused.body.error.details.tickets).toEqual([{ id: s.live, status: "waiting" }]);
    expect((await traces(person)).some((t) => t.organizationId === a.organizationId && t.table === "opt_outs")).toBe(true);

    expectOk(await call("POST", `/v1/tickets/${s.live}/cancel`, { token: a.owner.token }));
    await settle(a.queueId);
    const totals = await analyticsTotals(a.organizationId);
    expect(totals).toMatchObject({ created: 2, cancelled: 2 });

    const erased = expectOk(
      await call("POST", `/v1/organizations/${a.organizationId}/data-subjects/erase`, { token: a.owner.token, body: subject }),
    );
    expect(erased).toMatchObject({ matchedBy: ["phone", "email"], tickets: 2, ticketMessages: 1, optOuts: 1, appointments: 1 });
    await settle(a.queueId);

    // No row of the organization in any table holds the number, the e-mail or the name.
    const left = await traces(person);
    expect(left.filter((t) => t.organizationId !== b.organizationId)).toEqual([]);
    expect(left.some((t) => t.table === "tickets" && t.organizationId === b.organizationId)).toBe(true);
    // Nor the queue's room: its tickets, outbox and pushes; and its view through the API.
    const roomText = await runInDurableObject(room(a.queueId), (_i, state) =>
      JSON.stringify(
        ["tickets", "outbox", "ticket_pushes", "remote_joins"].map((t) => state.storage.sql.exec(`SELECT * FROM ${t}`).toArray()),
      ),
    );
    for (const value of [person.phone, person.name]) expect(roomText).not.toContain(value);
    const listed = await call("GET", `/v1/queues/${a.queueId}/tickets?status=cancelled`, { token: a.owner.token });
    expect(
      expectOk(listed)
        .map((t: any) => t.id)
        .sort(),
    ).toEqual([s.finished, s.live].sort());
    for (const value of [person.phone, person.name]) {
      expect(JSON.stringify(listed.body)).not.toContain(value);
      expect(JSON.stringify((await call("GET", `/v1/tickets/${s.live}`, { token: a.owner.token })).body)).not.toContain(value);
    }
    // Counts stay; the export finds nothing more; the other organization still has its records.
    expect(await analyticsTotals(a.organizationId)).toEqual(totals);
    const after = expectOk(
      await call("POST", `/v1/organizations/${a.organizationId}/data-subjects/export`, { token: a.owner.token, body: subject }),
    );
    expect([after.tickets, after.appointments, after.ticketMessages, after.optOuts, after.notificationDeliveries]).toEqual([
      [],
      [],
      [],
      [],
      [],
    ]);
    const other = expectOk(
      await call("POST", `/v1/organizations/${b.organizationId}/data-subjects/export`, { token: b.owner.token, body: subject }),
    );
    expect(other.tickets.map((t: any) => [t.id, t.phone, t.visitorName])).toEqual([[s.elsewhere, person.phone, person.name]]);
    expect(other.optOuts).toHaveLength(1);

    // Idempotent: again, nothing more to change.
    const again = expectOk(
      await call("POST", `/v1/organizations/${a.organizationId}/data-subjects/erase`, { token: a.owner.token, body: subject }),
    );
    expect(again).toMatchObject({ tickets: 0, ticketsAnonymised: 0, optOuts: 0, appointments: 0 });

    // The audit log has the erasure (and the exports), never the data.
    const audit = expectOk(
      await call("GET", `/v1/organizations/${a.organizationId}/audit-events?entityType=data_subject`, { token: a.owner.token }),
    );
    expect(audit.map((e: any) => e.action).sort()).toEqual([
      "data_subject.erased",
      "data_subject.erased",
      "export.data_subject",
      "export.data_subject",
    ]);
    expect(audit.find((e: any) => e.entityId === erased.requestId)).toMatchObject({ actor: { type: "user", id: a.owner.id } });
    for (const value of [person.phone, person.email, person.name]) expect(JSON.stringify(audit)).not.toContain(value);
  });

  it("only owners and admins (never a manager, scoped or not); another organization's owner sees 404; a phone or an e-mail is needed", async () => {
    const f = await queueFixture("pro");
    const path = `/v1/organizations/${f.organizationId}/data-subjects/export`;
    const body = { phone: randomPhone() };
    for (const role of ["operator", "manager"]) {
      const member = await addMember(f.owner, f.organizationId, role);
      expectError(await call("POST", path, { token: member.token, body }), 403, "AUTHORIZATION_ERROR");
      expectError(await call("POST", path.replace("export", "erase"), { token: member.token, body }), 403, "AUTHORIZATION_ERROR");
    }
    const location = (await env.DB.prepare("SELECT location_id FROM service_locations WHERE service_id = ?")
      .bind(f.serviceId)
      .first<{ location_id: string }>())!;
    const scoped = await registerUser();
    expectOk(
      await call("POST", `/v1/organizations/${f.organizationId}/members`, {
        token: f.owner.token,
        body: { email: scoped.email, role: "manager", locationIds: [location.location_id] },
      }),
      202,
    );
    await acceptInvitation(scoped, f.organizationId);
    expectError(await call("POST", path, { token: scoped.token, body }), 403, "AUTHORIZATION_ERROR");
    const admin = await addMember(f.owner, f.organizationId, "admin");
    expectOk(await call("POST", path, { token: admin.token, body }));
    const stranger = await queueFixture("pro");
    expectError(await call("POST", path, { token: stranger.owner.token, body }), 404, "NOT_FOUND");
    expectError(await call("POST", path, { token: f.owner.token, body: {} }), 400, "VALIDATION_ERROR", "phone");
    expectError(await call("POST", path, { token: f.owner.token, body: { phone: "0612345678" } }), 400, "VALIDATION_ERROR", "phone");
    const key = await createApiKey(f.owner, f.organizationId, ["write"]);
    expectError(await call("POST", path, { apiKey: key.key, body }), 403, "AUTHORIZATION_ERROR");
  });
});
