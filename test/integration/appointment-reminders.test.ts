import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { call, expectOk } from "../helpers/api";
import { insertLocation } from "../helpers/catalog";
import { addMember, createOrganization, registerUser } from "../helpers/fixtures";
import { inbox } from "../helpers/notifications";
import { sweep } from "../helpers/cron";

// appointment.reminder from the minute sweep: 24 h before each occurrence, once, in the
// attendee's language and the event's time zone.

/**
 * The user's appointment reminders. Their inbox also gets the organization's member.joined
 * notices, delivered by the EVENTS consumer whenever its batch arrives (before or after a sweep):
 * they are not this file's subject and made the first assertion depend on that timing.
 */
async function reminders(userId: string) {
  return (await inbox(userId)).filter((n) => n.type === "appointment.reminder");
}

describe("appointment reminders", () => {
  it("reminds each occurrence of a weekly appointment once, 24 h before, in French and Paris time", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "healthcare" });
    const locationId = await insertLocation(org.id, "Europe/Paris");
    const amelie = await addMember(owner, org.id, "operator", { language: "fr" });
    const john = await addMember(owner, org.id, "operator", { language: "en" });
    const quiet = await addMember(owner, org.id, "operator");
    expectOk(await call("PATCH", "/v1/notifications/preferences", { token: quiet.token, body: { ticketReminders: false } }));
    expectOk(
      await call("POST", `/v1/calendar/organization/${org.id}`, {
        token: owner.token,
        body: {
          title: "Consultation",
          eventType: "appointment",
          startDate: "2027-07-01T09:00:00Z",
          endDate: "2027-07-01T09:30:00Z",
          locationId,
          attendees: [amelie.id, john.id, quiet.id],
          recurrencePattern: "weekly",
        },
      }),
      201,
    );
    await sweep("2027-06-30T08:58:00Z");
    expect(await reminders(amelie.id)).toEqual([]);
    await sweep("2027-06-30T09:00:00Z");
    await sweep("2027-06-30T09:01:00Z");
    const fr = await reminders(amelie.id);
    expect(fr.map((n) => [n.type, n.title, n.body])).toEqual([
      ["appointment.reminder", "Rappel de rendez-vous", "Consultation : jeudi 1 juillet 2027 à 11:00."],
    ]);
    expect((await reminders(john.id)).map((n) => n.body)).toEqual(["Consultation: Thursday, 1 July 2027 at 11:00."]);
    expect(await reminders(quiet.id)).toEqual([]);
    // The next week's occurrence is reminded on its own day, once.
    await sweep("2027-07-07T09:00:00Z");
    await sweep("2027-07-07T12:00:00Z");
    expect((await reminders(amelie.id)).map((n) => n.body)).toEqual([
      "Consultation : jeudi 1 juillet 2027 à 11:00.",
      "Consultation : jeudi 8 juillet 2027 à 11:00.",
    ]);
  });

  it("says what the business wrote for the reminder in that language (docs/message-templates.md), ours in the others", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "healthcare" });
    const locationId = await insertLocation(org.id, "Europe/Paris");
    const amelie = await addMember(owner, org.id, "operator", { language: "fr" });
    const john = await addMember(owner, org.id, "operator", { language: "en" });
    expectOk(
      await call("PUT", `/v1/organizations/${org.id}/message-templates/appointment.reminder`, {
        token: owner.token,
        body: { language: "fr", title: "À demain", body: "{title} le {time}. Apportez votre carte vitale." },
      }),
    );
    expectOk(
      await call("POST", `/v1/calendar/organization/${org.id}`, {
        token: owner.token,
        body: {
          title: "Consultation",
          eventType: "appointment",
          startDate: "2027-07-01T09:00:00Z",
          endDate: "2027-07-01T09:30:00Z",
          locationId,
          attendees: [amelie.id, john.id],
        },
      }),
      201,
    );
    await sweep("2027-06-30T09:00:00Z");
    expect((await reminders(amelie.id)).map((n) => [n.title, n.body])).toEqual([
      ["À demain", "Consultation le jeudi 1 juillet 2027 à 11:00. Apportez votre carte vitale."],
    ]);
    expect((await reminders(john.id)).map((n) => n.body)).toEqual(["Consultation: Thursday, 1 July 2027 at 11:00."]);
  });

  it("reaches every organization: 201 events of one do not starve another's", async () => {
    const owner = await registerUser();
    const busy = await createOrganization(owner, { type: "healthcare" });
    const other = await createOrganization(owner, { type: "healthcare" });
    const awa = await addMember(owner, other.id, "operator");
    const at = Date.parse("2028-03-01T08:00:00Z");
    const statements = Array.from({ length: 201 }, (_v, i) =>
      env.DB.prepare(
        `INSERT INTO calendar_events (id, organization_id, title, start_at, end_at, event_type, attendees, created_at, updated_at)
         VALUES (?, ?, 'Busy', ?, ?, 'appointment', '[]', ?, ?)`,
      ).bind(`evt_busy${String(i).padStart(16, "0")}`, busy.id, at + 3_600_000 + i * 1000, at + 7_200_000, at, at),
    );
    for (let i = 0; i < statements.length; i += 50) await env.DB.batch(statements.slice(i, i + 50));
    await insertAppointmentEvent(other.id, "Late one", at + 20 * 3_600_000, [awa.id]);
    await sweep(at);
    await sweep(at + 60_000);
    expect((await reminders(awa.id)).map((n) => n.title)).toEqual(["Appointment reminder"]);
  });

  it("tells every attendee of the occurrences it claims, past a hundred", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "healthcare" });
    const at = Date.parse("2028-04-01T08:00:00Z");
    const ids = Array.from({ length: 120 }, (_v, i) => `usr_many${String(i).padStart(16, "0")}${org.id.slice(-4)}`);
    const rows = ids.map((id) =>
      env.DB.prepare(
        `INSERT INTO users (id, email, password_hash, first_name, last_name, account_type, role, language, created_at, updated_at)
         VALUES (?, ?, 'x', 'A', 'B', 'business', 'user', 'en', ?, ?)`,
      ).bind(id, `${id}@example.com`, at, at),
    );
    for (let i = 0; i < rows.length; i += 50) await env.DB.batch(rows.slice(i, i + 50));
    await insertAppointmentEvent(org.id, "Town hall", at + 3_600_000, ids);
    await sweep(at);
    const told = await env.DB.prepare(
      `SELECT COUNT(DISTINCT user_id) AS n FROM notifications WHERE type = 'appointment.reminder' AND organization_id = ?`,
    )
      .bind(org.id)
      .first<{ n: number }>();
    expect(told?.n).toBe(120);
  });

  it("does not lose a reminder whose delivery failed: the next sweep sends it", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "healthcare" });
    const ben = await addMember(owner, org.id, "operator");
    const at = Date.parse("2028-05-01T08:00:00Z");
    await insertAppointmentEvent(org.id, "Check-up", at + 3_600_000, [ben.id]);
    // D1 fails once, in the middle of the reminders' work (their second batch).
    const batch = env.DB.batch.bind(env.DB);
    let calls = 0;
    const spy = vi.spyOn(env.DB, "batch").mockImplementation(async (statements) => {
      calls += 1;
      if (calls === 2) throw new Error("D1_ERROR: network connection lost");
      return batch(statements);
    });
    try {
      await sweep(at);
    } finally {
      spy.mockRestore();
    }
    await sweep(at + 60_000);
    expect((await reminders(ben.id)).map((n) => n.body)).toHaveLength(1);
  });
});

async function insertAppointmentEvent(organizationId: string, title: string, startAt: number, attendees: string[]): Promise<void> {
  await env.DB.prepare(
    `INSERT INTO calendar_events (id, organization_id, title, start_at, end_at, event_type, attendees, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'appointment', ?, ?, ?)`,
  )
    .bind(
      `evt_${Math.random().toString(36).slice(2, 12).padEnd(10, "0")}${"0".repeat(10)}`,
      organizationId,
      title,
      startAt,
      startAt + 1_800_000,
      JSON.stringify(attendees),
      startAt,
      startAt,
    )
    .run();
}
