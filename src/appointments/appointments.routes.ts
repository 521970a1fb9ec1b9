import { createRoute, z } from "@hono/zod-openapi";
import { requireCredential } from "../http/auth";
import { errors, idParam, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { parseInstantInput } from "../lib/instant";
import { iso } from "../lib/time";
import { freeSlots } from "./appointments";

// Booking settings of a service, its free slots, and appointments (docs/appointments.md).

const app = router();
const tags = ["Appointments"];

/** A service's booking settings: every field has a default, so `{"enabled": true}` is enough. */
export const BookingSettingsSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    durationMinutes: z.number().int().min(5).max(480).default(30),
    slotStepMinutes: z
      .number()
      .int()
      .min(5)
      .max(480)
      .default(30)
      .openapi({ description: "Slots start every this many minutes from the opening" }),
    capacityPerSlot: z.number().int().min(1).max(100).default(1).openapi({ description: "Appointments one slot takes" }),
    leadTimeMinutes: z
      .number()
      .int()
      .min(0)
      .max(10_080)
      .default(60)
      .openapi({ description: "A slot is bookable up to this long before it starts" }),
    horizonDays: z.number().int().min(1).max(365).default(30).openapi({ description: "…and at most this many days ahead" }),
    checkInOpensMinutes: z.number().int().min(0).max(240).default(30).openapi({ description: "Check-in opens this long before the start" }),
    lateGraceMinutes: z.number().int().min(0).max(120).default(10).openapi({ description: "Past start + this, the appointment is late" }),
    lateBecomes: z.enum(["walk_in", "no_show"]).default("walk_in").openapi({ description: "What a late check-in becomes" }),
  })
  .openapi("BookingSettings", {
    example: {
      enabled: true,
      durationMinutes: 30,
      slotStepMinutes: 30,
      capacityPerSlot: 1,
      leadTimeMinutes: 60,
      horizonDays: 30,
      checkInOpensMinutes: 30,
      lateGraceMinutes: 10,
      lateBecomes: "walk_in",
    },
  });

/** An instant (ISO 8601 with Z or an offset) or a bare date (00:00 in the location's zone). */
const InstantText = z
  .string()
  .max(40)
  .refine((s) => parseInstantInput(s) !== null, "an ISO 8601 timestamp with Z or an offset, or a date YYYY-MM-DD");

const Slot = z
  .object({
    start: z.string(),
    end: z.string(),
    capacity: z.number().int(),
    remaining: z.number().int().openapi({ description: "Appointments this slot still takes (> 0: free)" }),
    staffIds: z.array(z.string()).openapi({ description: "Staff members free for all of it; empty when the calendar has no shifts" }),
  })
  .openapi("Slot");

const slots = createRoute({
  method: "get",
  path: "/services/{serviceId}/slots",
  tags,
  summary: "The free slots of a service at one of its locations",
  description:
    "From the location's opening hours and closures, the staff's shifts, breaks and unavailability (the team calendar), the " +
    "service's duration and what is already booked; only slots from now + leadTimeMinutes to now + horizonDays. At most 31 days " +
    "per request. Any signed-in user (customers book too), or an API key of the service's organization.",
  security: SECURITY.any,
  "x-outside-callers": "customers (they book)",
  request: {
    params: idParam("serviceId", "svc"),
    query: z.object({
      locationId: z.string().min(1).max(64).openapi({ example: "loc_d3m0par1s00000000000" }),
      from: InstantText.openapi({ example: "2026-03-23" }),
      to: InstantText.openapi({ example: "2026-03-24" }),
    }),
  },
  responses: { 200: jsonResponse(okEnvelope(z.array(Slot)), "The free slots, in start order"), ...errors() },
});

app.openapi(slots, async (c) => {
  const principal = requireCredential(c);
  const { serviceId } = c.req.valid("param");
  const { locationId, from, to } = c.req.valid("query");
  const fromInput = parseInstantInput(from)!;
  const toInput = parseInstantInput(to)!;
  const found = await freeSlots(c.env, principal, serviceId, locationId, fromInput, toInput, now());
  return c.json(ok(found.map((s) => ({ ...s, start: iso(s.start), end: iso(s.end) }))), 200);
});

export default app;
