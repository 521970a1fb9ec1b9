import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { guarded } from "../access/guard";
import { requireCredential } from "../http/auth";
import type { AppEnv } from "../http/context";
import { notFound } from "../http/errors";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, optionalJsonBody, SECURITY } from "../http/openapi";
import { IntakeAnswersBody } from "../http/schemas";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { iso, isoOrNull } from "../lib/time";
import { TicketRecord } from "../tickets/tickets.routes";
import { ticketRecord } from "../tickets/tickets";
import { widgetActor, WidgetTicket } from "../widget/widget.routes";
import { widgetTicket } from "../widget/widget";
import {
  appointmentByCode,
  checkIn,
  checkInCode,
  CHECK_IN_CODE_LENGTH,
  findAppointment,
  kioskLocation,
  type AppointmentRow,
  type CheckedIn,
} from "./check-in";
import { APPOINTMENT_TOKEN_HEADER, manageTokenHash } from "./manage-token";
import { ApiError } from "../http/errors";
import { deps, type Deps } from "../http/deps";

// Check-in (docs/blend.md): by staff, by the customer's manage token, or at the kiosk by the
// appointment's code. Each answers the appointment and its ticket: 201 when this call made the
// ticket, 200 when the appointment was already checked in (the same ticket).

const app = router();
const tags = ["Appointments"];

const CheckedInAppointment = z
  .object({
    id: z.string(),
    status: z.enum(["booked", "checked_in", "cancelled", "no_show"]),
    serviceId: z.string(),
    locationId: z.string(),
    startAt: z.string(),
    checkedInAt: z.string().nullable(),
    queueId: z.string().nullable(),
    ticketId: z.string().nullable(),
    checkInCode: z.string().openapi({ description: "The 6-character code a kiosk checks the appointment in with", example: "7KQ2MX" }),
  })
  .openapi("CheckedInAppointment");

async function appointmentRecord(row: AppointmentRow) {
  return {
    id: row.id,
    status: row.status,
    serviceId: row.serviceId,
    locationId: row.locationId,
    startAt: iso(row.startAt),
    checkedInAt: isoOrNull(row.checkedInAt),
    queueId: row.queueId,
    ticketId: row.ticketId,
    checkInCode: await checkInCode(row.id),
  };
}

const CHECK_IN_ERRORS = [409];

/** The customer's phone's position (remote join's shape): degrees, and the fix's accuracy in metres. */
const CheckInPosition = z
  .strictObject({
    latitude: z.number().min(-90).max(90).openapi({ example: 48.8709 }),
    longitude: z.number().min(-180).max(180).openapi({ example: 2.332 }),
    accuracy: z.number().min(0).max(1000).optional().openapi({ description: "Metres; default 0", example: 15 }),
  })
  .openapi("CheckInPosition");

const CheckInAnswer = z
  .object({
    appointment: CheckedInAppointment,
    ticket: TicketRecord,
    ticketToken: z.string().nullable().openapi({
      description:
        "The customer's visitor token of the new ticket (the status page `/t/{ticketId}#token=…`, docs/widget.md) when checked in with the manage token (201); else null",
    }),
  })
  .openapi("AppointmentCheckIn");

const checkInRoute = createRoute({
  method: "post",
  path: "/appointments/{appointmentId}/check-in",
  tags,
  summary: "Check an appointment in: its ticket in the service's queue",
  description:
    "By staff with QUEUE_OPERATE at the appointment's location, or by the customer with the manage token in `X-Appointment-Token`. " +
    "Opens `checkInOpensMinutes` before the start (the queue's blend policy; earlier: 409 CHECK_IN_NOT_OPEN with `details.opensAt`). " +
    "Makes a ticket of kind `appointment` (201); an appointment already checked in answers the same ticket (200). Past the start " +
    "plus `lateGraceMinutes`, the policy's `lateAction` applies: a ticket placed by arrival like a walk-in, or 409 INVALID_STATE " +
    "(`details.status` no_show). A cancelled or missed appointment: 409 INVALID_STATE. When the service asks intake questions " +
    "(GET /v1/services/{serviceId}/intake), `intake` carries the answers as a join does: a missing or wrong `at_join` answer is " +
    "400 VALIDATION_ERROR naming `intake.<key>` (`details.serviceId` and `details.queueId` say whose questions: GET /v1/widget/queue/{queueId}/intake) and the appointment stays booked; the ticket carries them. When the service sets " +
    "`booking.checkInRadiusMeters`, a check-in with the manage token must carry the phone's `position` (400 on `position` without), " +
    "within that radius of the location, distance minus accuracy (else 422 OUT_OF_RANGE `details {distanceKm, maxKm}`); staff need none.",
  security: SECURITY.any,
  "x-outside-callers": "the appointment's customer, with its manage token",
  request: {
    params: idParam("appointmentId", "apt"),
    headers: z.object({ [APPOINTMENT_TOKEN_HEADER]: z.string().optional() }),
    body: optionalJsonBody(
      z
        .strictObject({
          intake: IntakeAnswersBody.optional(),
          position: CheckInPosition.optional().openapi({ description: "Where the customer's phone is (the service's check-in radius)" }),
        })
        .openapi("AppointmentCheckInRequest"),
    ),
  },
  responses: {
    200: jsonResponse(okEnvelope(CheckInAnswer), "Already checked in: its ticket"),
    201: jsonResponse(okEnvelope(CheckInAnswer), "Checked in: the new ticket"),
    ...errors(...CHECK_IN_ERRORS),
  },
});

/** The appointment the caller may check in: the token's, or staff's with QUEUE_OPERATE. */
async function checkable(c: Context<AppEnv>, appointmentId: string): Promise<{ row: AppointmentRow; channel: "staff" | "customer" }> {
  const token = c.req.header(APPOINTMENT_TOKEN_HEADER);
  if (token !== undefined) {
    const hash = await manageTokenHash(deps(c), token);
    const row = hash === null ? null : await findAppointment(deps(c), appointmentId).catch(() => null);
    // A wrong token is told nothing more than an unknown appointment.
    if (row === null || hash !== row.tokenHash) throw notFound("Appointment");
    return { row, channel: "customer" };
  }
  requireCredential(c);
  const { row } = guarded(c, "appointment", "QUEUE_OPERATE");
  return { row, channel: "staff" };
}

async function answer(c: Context<AppEnv>, done: CheckedIn) {
  return { appointment: await appointmentRecord(done.appointment), ticket: ticketRecord(done.ticket), ticketToken: done.token };
}

app.openapi(checkInRoute, async (c) => {
  const { row, channel } = await checkable(c, c.req.valid("param").appointmentId);
  const { intake, position } = c.req.valid("json");
  const done = await checkIn(deps(c), row, channel, now(), intake, position);
  const body = ok(await answer(c, done));
  return done.created ? c.json(body, 201) : c.json(body, 200);
});

const KioskCheckInAnswer = z
  .object({
    appointment: CheckedInAppointment,
    ticket: WidgetTicket,
    ticketToken: z.string().nullable().openapi({
      description:
        "The visitor's ticket token (docs/widget.md: the status page, the receipt) when this call made the ticket (201); null when it was already checked in",
    }),
  })
  .openapi("KioskCheckIn", { description: "The appointment and its ticket, as the kiosk prints it" });

const kioskCheckIn = createRoute({
  method: "post",
  path: "/widget/locations/{locationId}/check-in",
  tags: ["Widget"],
  summary: "The kiosk's \"I have an appointment\": check in by the appointment's code or QR code",
  description:
    "A `widget` key, or any key or member that may join the organization's queues. `code` is the appointment's 6-character check-in " +
    "code (`checkInCode`, case and dashes ignored); an unknown code, or one of another location, is 404. Or `qr`: what the kiosk's " +
    "scanner read from the appointment's QR code, its manage link `…/appointments/{appointmentId}#token=<manageToken>` (a wrong " +
    "token, or another location's appointment, is 404; text that is no manage link is 400 on `qr`). Exactly one of the two. `intake`: the answers to " +
    "the service's questions, as on the check-in. The rest is the check-in's: " +
    "CHECK_IN_NOT_OPEN before the window, the same ticket when already checked in (200), 201 for a new ticket.",
  security: SECURITY.any,
  request: {
    params: idParam("locationId", "loc"),
    body: jsonBody(
      z
        .strictObject({
          code: z
            .string()
            .min(CHECK_IN_CODE_LENGTH)
            .max(CHECK_IN_CODE_LENGTH + 4)
            .optional()
            .openapi({ example: "7KQ-2MX" }),
          qr: z
            .string()
            .min(1)
            .max(600)
            .optional()
            .openapi({ description: "The appointment's QR code as scanned: its manage link (instead of `code`)" }),
          intake: IntakeAnswersBody.optional(),
        })
        .openapi("KioskCheckInRequest"),
    ),
  },
  responses: {
    200: jsonResponse(okEnvelope(KioskCheckInAnswer), "Already checked in: its ticket"),
    201: jsonResponse(okEnvelope(KioskCheckInAnswer), "Checked in: the new ticket"),
    ...errors(...CHECK_IN_ERRORS),
  },
});

app.openapi(kioskCheckIn, async (c) => {
  const { locationId } = c.req.valid("param");
  const location = await kioskLocation(deps(c), locationId);
  await widgetActor(c, location.organizationId, "join", { what: "Location", at: [location.id] });
  const at = now();
  const { code, qr, intake } = c.req.valid("json");
  if ((code === undefined) === (qr === undefined)) {
    throw new ApiError("VALIDATION_ERROR", "Send the appointment's code or its scanned QR code, one of the two", {
      field: code === undefined ? "code" : "qr",
      reason: "exactly one of code and qr",
    });
  }
  const row =
    code !== undefined ? await appointmentByCode(deps(c), location.id, code, at) : await appointmentByQr(deps(c), location.id, qr!);
  const done = await checkIn(deps(c), row, "kiosk", at, intake);
  const body = ok({
    appointment: await appointmentRecord(done.appointment),
    ticket: widgetTicket(done.ticket),
    ticketToken: done.token,
  });
  return done.created ? c.json(body, 201) : c.json(body, 200);
});

/** The manage link `…/appointments/{id}#token=…` a QR code holds (the confirmation's link, docs/appointments.md). */
const MANAGE_LINK_ID = /\/appointments\/(apt_[A-Za-z0-9]{1,60})(?=[/?#]|$)/;
const MANAGE_LINK_TOKEN = /[#?&]token=([A-Za-z0-9_-]{1,128})(?=&|$)/;

/** The appointment a scanned manage link names, if its token is its own and it is at this location (else 404). */
async function appointmentByQr(deps: Deps, locationId: string, qr: string): Promise<AppointmentRow> {
  const id = MANAGE_LINK_ID.exec(qr.trim())?.[1];
  const token = MANAGE_LINK_TOKEN.exec(qr.trim())?.[1];
  if (!id || !token) {
    throw new ApiError("VALIDATION_ERROR", "This QR code is not an appointment's", { field: "qr", reason: "not a manage link" });
  }
  const hash = await manageTokenHash(deps, token);
  const row = hash === null ? null : await findAppointment(deps, id).catch(() => null);
  // A wrong token, or an appointment of another location, is told nothing more than an unknown one.
  if (row === null || hash !== row.tokenHash || row.locationId !== locationId) throw notFound("Appointment");
  return row;
}

export default app;
