import { describe, expect, it } from "vitest";
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
});
