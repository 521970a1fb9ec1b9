import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { appointmentRow, bookAppointment } from "../helpers/booked-appointments";
import { testClock } from "../helpers/clock";
import { sweep } from "../helpers/cron";
import {
  acceptInvitation,
  addMember,
  createApiKey,
  createOrganization,
  createQueueFixture,
  registerUser,
  walkIn,
  type QueueFixture,
} from "../helpers/fixtures";
import { capture, inbox } from "../helpers/notifications";
import { settle } from "../helpers/catalog";
import { checkInCode } from "../../src/appointments/check-in";
import { env } from "cloudflare:test";

// Check-in of a booked appointment (docs/blend.md): by staff, by the manage token, at the kiosk
// by code; the window, lateness, idempotence under concurrency, the no-show sweep.

const START = Date.parse("2026-06-10T10:30:00.000Z");
const MIN = 60_000;

async function clinic(): Promise<QueueFixture> {
  testClock.set(START - 60 * MIN);
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "healthcare" });
  return createQueueFixture(owner, org.id);
}

const book = (f: QueueFixture, extra: Partial<Parameters<typeof bookAppointment>[0]> = {}) =>
  bookAppointment({ auth: { token: f.owner.token }, serviceId: f.serviceId, locationId: f.locationId, startAt: START, ...extra });

const checkIn = (id: string, auth: { token?: string; apiKey?: string; headers?: Record<string, string> }) =>
  call("POST", `/v1/appointments/${id}/check-in`, auth);

describe("check-in", () => {
  it("staff check an appointment in: a ticket of kind appointment in the service's queue, the row checked_in; again answers the same ticket", async () => {
    const f = await clinic();
    const apt = await book(f);
    testClock.set(START - 10 * MIN);
    const res = checkIn(apt.id, { token: f.owner.token });
    const first = expectOk(await res, 201);
    expect(first.ticket).toMatchObject({
      queueId: f.queueId,
      kind: "appointment",
      appointmentAt: "2026-06-10T10:30:00.000Z",
      status: "waiting",
      visitorName: "Awa Diallo",
      placement: { rule: "appointment_early" },
    });
    expect(first.appointment).toMatchObject({ id: apt.id, status: "checked_in", ticketId: first.ticket.id, queueId: f.queueId });
    expect(first.appointment.checkInCode).toMatch(/^[0-9A-Z]{6}$/);
    const row = await appointmentRow(apt.id);
    expect(row).toMatchObject({ status: "checked_in", ticket_id: first.ticket.id, queue_id: f.queueId, checked_in_at: START - 10 * MIN });

    const again = expectOk(await checkIn(apt.id, { token: f.owner.token }), 200);
    expect(again.ticket.id).toBe(first.ticket.id);
    // GET /v1/tickets answers the same kind and time.
    const ticket = expectOk(await call("GET", `/v1/tickets/${first.ticket.id}`, { token: f.owner.token }));
    expect(ticket).toMatchObject({ kind: "appointment", appointmentAt: "2026-06-10T10:30:00.000Z" });
  });

  it("a walk-in says kind walk_in with no appointment time and a placement by arrival", async () => {
    const f = await clinic();
    const t = await walkIn(f.owner, f.queueId);
    expect(t).toMatchObject({ kind: "walk_in", appointmentAt: null, placement: { rule: "walk_in_arrival" } });
    expect((t as any).placement.reason).toMatch(/Sans rendez-vous, par ordre d'arrivée|Walk-in, in order of arrival/);
  });

  it("too early is 409 CHECK_IN_NOT_OPEN with details.opensAt (the service's checkInOpensMinutes)", async () => {
    const f = await clinic();
    const apt = await book(f);
    testClock.set(START - 31 * MIN);
    const res = await checkIn(apt.id, { token: f.owner.token });
    expectError(res, 409, "CHECK_IN_NOT_OPEN");
    expect(res.body.error.details).toMatchObject({ opensAt: "2026-06-10T10:00:00.000Z", checkInOpensMinutes: 30 });
    expect((await appointmentRow(apt.id)).status).toBe("booked");
  });

  it("the customer checks in with the manage token, without any session; a wrong token is 404; nothing at all is 401", async () => {
    const f = await clinic();
    const apt = await book(f);
    testClock.set(START);
    expectError(await checkIn(apt.id, { headers: { "X-Appointment-Token": "x".repeat(44) } }), 404, "NOT_FOUND");
    const other = await book(f);
    expectError(await checkIn(apt.id, { headers: { "X-Appointment-Token": other.token } }), 404, "NOT_FOUND");
    expectError(await checkIn(apt.id, {}), 401, "AUTHENTICATION_ERROR");
    const done = expectOk(await checkIn(apt.id, { headers: { "X-Appointment-Token": apt.token } }), 201);
    expect(done.ticket).toMatchObject({ kind: "appointment", source: "app" });
    // The manage page follows the new ticket on the status page with its visitor token; a second check-in has none to give.
    expect(done.ticketToken).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expectOk(await call("GET", `/v1/widget/tickets/${done.ticket.id}`, { headers: { "X-Ticket-Token": done.ticketToken } }));
    expect(expectOk(await checkIn(apt.id, { headers: { "X-Appointment-Token": apt.token } }), 200).ticketToken).toBeNull();
  });

  it("the kiosk checks in by code with a widget key; an unknown code is 404", async () => {
    const f = await clinic();
    const apt = await book(f);
    const key = await createApiKey(f.owner, f.organizationId, ["widget"]);
    testClock.set(START - 5 * MIN);
    const staffView = expectOk(await checkIn(apt.id, { token: f.owner.token }), 201);
    const code: string = staffView.appointment.checkInCode;
    const kiosk = (c: string) => call("POST", `/v1/widget/locations/${f.locationId}/check-in`, { apiKey: key.key, body: { code: c } });
    expectError(await kiosk("ZZZZZZ"), 404, "NOT_FOUND");
    const again = expectOk(await kiosk(`${code.slice(0, 3)}-${code.slice(3).toLowerCase()}`), 200);
    expect(again.ticket).toMatchObject({ id: staffView.ticket.id, kind: "appointment" });
    expect(again.ticketToken).toBeNull();
    const apt3 = await book(f, { startAt: START + 20 * MIN });
    const code3 = await checkInCode(apt3.id);
    const made = expectOk(await kiosk(code3), 201);
    expect(made.ticket).toMatchObject({ kind: "appointment", source: "widget", placement: { rule: "appointment_early" } });
    expect(made.appointment).toMatchObject({ id: apt3.id, status: "checked_in" });
    // The kiosk's receipt follows the new ticket with its visitor token, like a walk-in's.
    const followed = expectOk(
      await call("GET", `/v1/widget/tickets/${made.ticket.id}`, { headers: { "X-Ticket-Token": made.ticketToken } }),
    );
    expect(followed).toMatchObject({ ticketId: made.ticket.id, status: "waiting", kind: "appointment" });
  });

  it("twenty concurrent check-ins make exactly one ticket", async () => {
    const f = await clinic();
    const apt = await book(f);
    testClock.set(START - 5 * MIN);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        checkIn(apt.id, i % 2 === 0 ? { token: f.owner.token } : { headers: { "X-Appointment-Token": apt.token } }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    const ids = new Set(answers.map((a) => a.body.data.ticket.id));
    expect(ids.size).toBe(1);
    const waiting = expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets?status=waiting`, { token: f.owner.token }));
    expect(waiting).toHaveLength(1);
    expect((await appointmentRow(apt.id)).ticket_id).toBe([...ids][0]);
  });

  it("another organization's member is told 404; an operator of the organization may check in", async () => {
    const f = await clinic();
    const apt = await book(f);
    testClock.set(START);
    const stranger = await registerUser();
    await createOrganization(stranger);
    expectError(await checkIn(apt.id, { token: stranger.token }), 404, "NOT_FOUND");
    const operator = await addMember(f.owner, f.organizationId, "operator");
    expectOk(await checkIn(apt.id, { token: operator.token }), 201);
  });

  it("a member scoped to another location is told 404 (the scope rules), at the check-in and at that location's kiosk; one scoped here may check in", async () => {
    const f = await clinic();
    const [byStaff, byKiosk] = [await book(f), await book(f)];
    const annex = expectOk(
      await call("POST", "/v1/locations", {
        token: f.owner.token,
        body: { organizationId: f.organizationId, name: "Annex", address: "2 rue", latitude: 48.86, longitude: 2.36 },
      }),
      201,
    ).id;
    const scoped = async (locationIds: string[]) => {
      const user = await registerUser();
      expectOk(
        await call("POST", `/v1/organizations/${f.organizationId}/members`, {
          token: f.owner.token,
          body: { email: user.email, role: "manager", locationIds },
        }),
        202,
      );
      await acceptInvitation(user, f.organizationId);
      return user;
    };
    const elsewhere = await scoped([annex]);
    const here = await scoped([f.locationId]);
    testClock.set(START - 5 * MIN);
    const unknown = await checkIn("apt_unknown", { token: elsewhere.token });
    expectError(unknown, 404, "NOT_FOUND");
    const refused = await checkIn(byStaff.id, { token: elsewhere.token });
    expectError(refused, 404, "NOT_FOUND");
    // The same answer as an unknown id: nothing tells that the appointment exists.
    const told = (e: any) => ({ code: e.code, message: e.message, details: e.details });
    expect(told(refused.body.error)).toEqual(told(unknown.body.error));
    const code = await checkInCode(byKiosk.id);
    expectError(
      await call("POST", `/v1/widget/locations/${f.locationId}/check-in`, { token: elsewhere.token, body: { code } }),
      404,
      "NOT_FOUND",
    );
    expect(await appointmentRow(byStaff.id)).toMatchObject({ status: "booked", ticket_id: null });
    expect(await appointmentRow(byKiosk.id)).toMatchObject({ status: "booked", ticket_id: null });
    expectOk(await checkIn(byStaff.id, { token: here.token }), 201);
    expectOk(await call("POST", `/v1/widget/locations/${f.locationId}/check-in`, { token: here.token, body: { code } }), 201);
  });

  it("a key without QUEUE_OPERATE is 403 at the check-in and at the kiosk (a read key); the appointment stays booked", async () => {
    const f = await clinic();
    const apt = await book(f);
    const reader = await createApiKey(f.owner, f.organizationId, ["read:queues"]);
    testClock.set(START - 5 * MIN);
    expectError(await checkIn(apt.id, { apiKey: reader.key }), 403, "AUTHORIZATION_ERROR");
    const code = await checkInCode(apt.id);
    expectError(
      await call("POST", `/v1/widget/locations/${f.locationId}/check-in`, { apiKey: reader.key, body: { code } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expect(await appointmentRow(apt.id)).toMatchObject({ status: "booked", ticket_id: null });
  });

  it("late past the grace: placed by arrival as a walk-in, or refused as a no-show when the service says so", async () => {
    const f = await clinic();
    const late = await book(f);
    testClock.set(START + 11 * MIN);
    const t = expectOk(await checkIn(late.id, { token: f.owner.token }), 201).ticket;
    expect(t.placement.rule).toBe("late_appointment");
    expect(t.placement.reason).toBe("Late for the 10:30 appointment: in order of arrival, as a walk-in");

    expectOk(
      await call("PATCH", `/v1/services/${f.serviceId}`, {
        token: f.owner.token,
        body: { booking: { lateBecomes: "no_show", lateGraceMinutes: 5 } },
      }),
    );
    const refused = await book(f);
    const c = capture();
    const res = await checkIn(refused.id, { token: f.owner.token });
    expectError(res, 409, "INVALID_STATE");
    expect(res.body.error.details).toMatchObject({ status: "no_show", reason: "late" });
    expect((await appointmentRow(refused.id)).status).toBe("no_show");
    expect(c.take((e) => e.type === "appointment.no_show").map((e) => e.data.appointmentId)).toEqual([refused.id]);
    c.restore();
  });

  it("a cancelled appointment cannot be checked in", async () => {
    const f = await clinic();
    const apt = await book(f);
    await env.DB.prepare("UPDATE appointments SET status = 'cancelled' WHERE id = ?").bind(apt.id).run();
    testClock.set(START);
    const res = await checkIn(apt.id, { token: f.owner.token });
    expectError(res, 409, "INVALID_STATE");
    expect(res.body.error.details.status).toBe("cancelled");
  });

  it("checked_in is published with the ticket", async () => {
    const f = await clinic();
    const apt = await book(f);
    testClock.set(START);
    const c = capture();
    const t = expectOk(await checkIn(apt.id, { token: f.owner.token }), 201).ticket;
    await settle(f.queueId);
    const events = c.take((e) => e.type === "appointment.checked_in");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      organizationId: f.organizationId,
      ticketId: t.id,
      data: { appointmentId: apt.id, channel: "staff" },
    });
    const created = c.take((e) => e.type === "ticket.created" && e.ticketId === t.id);
    expect(created[0]?.data).toMatchObject({ kind: "appointment", appointmentAt: "2026-06-10T10:30:00.000Z" });
    c.restore();
  });

  it("the cron marks an appointment not checked in by start + grace a no_show, frees it, publishes and tells the customer in their language", async () => {
    const f = await clinic();
    const customer = await registerUser();
    const apt = await book(f, { customerToken: customer.token, language: "fr" });
    const onTime = await book(f, { startAt: START + 30 * MIN });
    const c = capture();
    await sweep(START + 10 * MIN);
    expect((await appointmentRow(apt.id)).status).toBe("booked");
    await sweep(START + 10 * MIN + 1);
    expect((await appointmentRow(apt.id)).status).toBe("no_show");
    expect((await appointmentRow(onTime.id)).status).toBe("booked");
    // The file's earlier tests left booked appointments at the same hour: only this test's are looked at.
    const missed = c.take((e) => e.type === "appointment.no_show").map((e) => e.data.appointmentId);
    expect(missed).toContain(apt.id);
    expect(missed).not.toContain(onTime.id);
    c.restore();
    const told = (await inbox(customer.id)).filter((n) => n.type === "appointment.no_show");
    expect(told).toHaveLength(1);
    expect(told[0]!.title).toBe("Rendez-vous manqué");
    expect(told[0]!.body).toContain("10 juin 2026");
    testClock.set(START + 11 * MIN);
    const res = await checkIn(apt.id, { token: f.owner.token });
    expectError(res, 409, "INVALID_STATE");
  });
});

describe("the no-show message", () => {
  it("is the catalogue's text in the customer's language, any of the six (a Spanish customer is told in Spanish)", async () => {
    const f = await clinic();
    const customer = await registerUser();
    const apt = await book(f, { customerToken: customer.token, language: "es", startAt: START + 60 * MIN });
    await sweep(START + 71 * MIN);
    expect((await appointmentRow(apt.id)).status).toBe("no_show");
    const told = (await inbox(customer.id)).filter((n) => n.type === "appointment.no_show");
    expect(told).toHaveLength(1);
    expect(told[0]!.title).toBe("Cita perdida");
    expect(told[0]!.body).toMatch(
      /^No registró su llegada a la cita del .*10 de junio de 2026.*: se ha cancelado y el horario queda libre\.$/,
    );
  });
});

describe("check-in with intake answers", () => {
  const FIELDS = [
    {
      key: "reason",
      label: { fr: "Motif", en: "Reason" },
      type: "select",
      options: [
        { value: "passport", label: { fr: "Passeport", en: "Passport" } },
        { value: "lost_card", label: { fr: "Carte perdue", en: "Lost card" } },
      ],
      required: "at_join",
    },
    { key: "account", label: { fr: "Compte", en: "Account" }, type: "text", personal: true },
  ];

  it("a service with a required question: staff, the token and the kiosk give the answers (400 naming the field without), the ticket carries them", async () => {
    const f = await clinic();
    expectOk(await call("PUT", `/v1/services/${f.serviceId}/intake`, { token: f.owner.token, body: { fields: FIELDS } }));
    const key = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const [byStaff, byToken, byKiosk] = [await book(f), await book(f), await book(f)];
    testClock.set(START - 5 * MIN);

    // Without the answer, or with a wrong one: 400 naming it, and the appointment is still booked (no ticket).
    expectError(await checkIn(byStaff.id, { token: f.owner.token }), 400, "VALIDATION_ERROR", "intake.reason");
    expectError(
      await call("POST", `/v1/appointments/${byStaff.id}/check-in`, { token: f.owner.token, body: { intake: { reason: "visa" } } }),
      400,
      "VALIDATION_ERROR",
      "intake.reason",
    );
    expectError(
      await call("POST", `/v1/appointments/${byStaff.id}/check-in`, { token: f.owner.token, body: { answers: {} } }),
      400,
      "VALIDATION_ERROR",
      "answers",
    );
    expect(await appointmentRow(byStaff.id)).toMatchObject({ status: "booked", ticket_id: null });

    const staff = expectOk(
      await call("POST", `/v1/appointments/${byStaff.id}/check-in`, {
        token: f.owner.token,
        body: { intake: { reason: "passport", account: "FR76 1234" } },
      }),
      201,
    );
    expect(staff.ticket).toMatchObject({ kind: "appointment", intake: { reason: "passport", account: "FR76 1234" } });

    const headers = { "X-Appointment-Token": byToken.token };
    expectError(await checkIn(byToken.id, { headers }), 400, "VALIDATION_ERROR", "intake.reason");
    const own = expectOk(
      await call("POST", `/v1/appointments/${byToken.id}/check-in`, { headers, body: { intake: { reason: "lost_card" } } }),
      201,
    );
    expect(own.ticket.intake).toMatchObject({ reason: "lost_card" });
    // Checked in already: the same ticket, whatever answers come again.
    const again = expectOk(
      await call("POST", `/v1/appointments/${byToken.id}/check-in`, { headers, body: { intake: { reason: "passport" } } }),
    );
    expect(again.ticket).toMatchObject({ id: own.ticket.id, intake: { reason: "lost_card" } });

    const code = await checkInCode(byKiosk.id);
    const kiosk = (body: Record<string, unknown>) =>
      call("POST", `/v1/widget/locations/${f.locationId}/check-in`, { apiKey: key.key, body: { code, ...body } });
    const unanswered = await kiosk({});
    expectError(unanswered, 400, "VALIDATION_ERROR", "intake.reason");
    // The kiosk has only the code: the refusal names whose questions to ask, and the widget key reads them.
    expect(unanswered.body.error.details).toMatchObject({ serviceId: f.serviceId, queueId: f.queueId });
    const asked = expectOk(await call("GET", `/v1/widget/queue/${unanswered.body.error.details.queueId}/intake`, { apiKey: key.key }));
    expect(asked.fields.map((q: { key: string }) => q.key)).toEqual(["reason", "account"]);
    expectError(await kiosk({ intake: { reason: "visa" } }), 400, "VALIDATION_ERROR", "intake.reason");
    const printed = expectOk(await kiosk({ intake: { reason: "passport" } }), 201);
    const staffView = expectOk(await call("GET", `/v1/tickets/${printed.ticket.id}`, { token: f.owner.token }));
    expect(staffView).toMatchObject({ kind: "appointment", intake: { reason: "passport" } });
  });
});

describe("booked through the API, then checked in", () => {
  it("the manage token POST /v1/appointments answered checks the customer in: one appointment ticket at the booked time", async () => {
    const f = await clinic();
    const hours = [{ open: "09:00", close: "17:00" }];
    expectOk(
      await call("PATCH", `/v1/locations/${f.locationId}`, {
        token: f.owner.token,
        body: { timezone: "Europe/Paris", openingHours: { mon: hours, tue: hours, wed: hours, thu: hours, fri: hours } },
      }),
    );
    const booking = { durationMinutes: 30, slotStepMinutes: 30, capacityPerSlot: 1, leadTimeMinutes: 0, horizonDays: 60 };
    expectOk(await call("PATCH", `/v1/services/${f.serviceId}`, { token: f.owner.token, body: { booking } }));
    // Wednesday 10 June 2026, 12:30 in Paris.
    const booked = expectOk(
      await call("POST", "/v1/appointments", {
        token: f.owner.token,
        body: {
          serviceId: f.serviceId,
          locationId: f.locationId,
          start: "2026-06-10T10:30:00.000Z",
          customer: { name: "Awa Diallo", language: "fr" },
        },
      }),
      201,
    );
    testClock.set(START - 5 * MIN);
    const first = expectOk(await checkIn(booked.id, { headers: { "X-Appointment-Token": booked.manageToken } }), 201);
    expect(first.ticket).toMatchObject({ queueId: f.queueId, kind: "appointment", appointmentAt: "2026-06-10T10:30:00.000Z" });
    expect(first.ticket.placement.reason).toMatch(/Rendez-vous/);
    const read = expectOk(await call("GET", `/v1/appointments/${booked.id}`, { headers: { "X-Appointment-Token": booked.manageToken } }));
    expect(read).toMatchObject({ status: "checked_in", ticketId: first.ticket.id });
  });
});

describe("an unknown appointment", () => {
  it("is 404 for staff and keys alike (the check-in is open to token holders, so the guard lets the id through)", async () => {
    const f = await clinic();
    const key = await createApiKey(f.owner, f.organizationId, ["admin"]);
    expectError(await checkIn("apt_unknown0000000000000", { token: f.owner.token }), 404, "NOT_FOUND");
    expectError(await checkIn("apt_unknown0000000000000", { apiKey: key.key }), 404, "NOT_FOUND");
  });
});
