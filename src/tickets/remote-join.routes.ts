import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { CONFIRM_METHODS, REMOTE_JOIN_STATUSES, type ConfirmMethod } from "../domain/remote-join";
import { actorIn, authorize, requireCredential, requireUser } from "../http/auth";
import type { AppEnv } from "../http/context";
import { ApiError, forbidden, notFound } from "../http/errors";
import { permissionRefused } from "../http/permission-refusal";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { IntakeAnswersBody } from "../http/schemas";
import type { TicketView } from "./tickets";
import { findQueue, type QueueRow } from "./queues";
import { confirmArrival, eligibility, remoteJoinAndTicket, remoteJoinOf, startRemoteJoin, updateRemoteLocation } from "./remote-join";
import { getTicket } from "./tickets";
import { ticketQueueOfCaller } from "./queue-access";
import { TicketRecord } from "./tickets.routes";
import { deps } from "../http/deps";

const app = router();
const tags = ["Remote join"];

const Latitude = z.number().min(-90).max(90);
const Longitude = z.number().min(-180).max(180);
const Position = z.strictObject({ latitude: Latitude, longitude: Longitude });

const RemoteJoinRecord = z
  .object({
    id: z.string(),
    ticketId: z.string().openapi({ description: "Addresses the remote join in the later routes" }),
    queueId: z.string(),
    userId: z.string(),
    status: z.enum(REMOTE_JOIN_STATUSES),
    geofenceRadiusM: z.number().int(),
    lastLocation: z
      .object({ latitude: z.number(), longitude: z.number(), accuracyM: z.number(), distanceM: z.number().int() })
      .nullable()
      .openapi({ description: "The latest position sent, with its distance to the nearest location of the service" }),
    lastLocationAt: z.string().openapi({ description: "The latest location update (the start, before any)" }),
    warnedAt: z.string().nullable().openapi({ description: "When the inactivity warning was sent (7 minutes without an update)" }),
    reachedFrontAt: z.string().nullable().openapi({ description: "When no callable ticket was left ahead of it" }),
    expiresAt: z.string().nullable().openapi({ description: "30 minutes after reachedFrontAt, while not arrived" }),
    arrivedAt: z.string().nullable(),
    confirmMethod: z.enum(CONFIRM_METHODS).nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("RemoteJoin");

const RemoteJoinResponse = okEnvelope(z.object({ remoteJoin: RemoteJoinRecord, ticket: TicketRecord }));

const eligibilityRoute = createRoute({
  method: "post",
  path: "/queues/{queueId}/eligibility",
  tags,
  summary: "May a customer at this position join the queue remotely?",
  description:
    "The allowed radius is the service's maxRemoteJoinRadiusKm, else the organization's availabilityRadiusKm, else 5 km, " +
    "measured (haversine) to the nearest location of the service. `reason` (when not eligible): penalty, queue_paused, " +
    "queue_closed, no_location or out_of_range. Any signed-in user; an API key with QUEUE_VIEW, for its organization's queues only.",
  security: SECURITY.any,
  "x-outside-callers": "customers",
  request: { params: idParam("queueId", "que"), body: jsonBody(Position.openapi("EligibilityRequest")) },
  responses: {
    200: jsonResponse(
      okEnvelope(
        z
          .object({
            eligible: z.boolean(),
            distanceKm: z.number().nullable(),
            maxRadiusKm: z.number(),
            reason: z.enum(["penalty", "queue_paused", "queue_closed", "no_location", "out_of_range"]).optional(),
            penaltyUntil: z.string().optional(),
          })
          .openapi("Eligibility"),
      ),
      "The answer",
    ),
    ...errors(),
  },
});

app.openapi(eligibilityRoute, async (c) => {
  const principal = requireCredential(c);
  const queue = await findQueue(deps(c), c.req.valid("param").queueId);
  if (principal.kind === "apiKey") await authorize(c, queue.organizationId, "QUEUE_VIEW", "Queue");
  const userId = principal.kind === "session" ? principal.user.id : null;
  return c.json(ok(await eligibility(deps(c), queue, c.req.valid("json"), userId, now())), 200);
});

const start = createRoute({
  method: "post",
  path: "/remote-join/{queueId}/start",
  tags,
  summary: "Join a queue from a distance",
  description:
    "Needs a user session. Creates a waiting ticket that is not called until the customer arrives (call-next passes over it; " +
    "it keeps its place). 403 REMOTE_JOIN_PENALTY while penalised (3 expired remote joins in 7 days → 24 hours), " +
    "422 OUT_OF_RANGE outside the allowed radius, 409 CONFLICT while the user already has a remote join on its way here.",
  security: SECURITY.session,
  "x-outside-callers": "customers",
  request: {
    params: idParam("queueId", "que"),
    body: jsonBody(Position.extend({ intake: IntakeAnswersBody.optional() }).openapi("RemoteJoinStartRequest")),
  },
  responses: { 201: jsonResponse(RemoteJoinResponse, "Started"), ...errors(409, 422) },
});

app.openapi(start, async (c) => {
  const { user } = requireUser(c);
  const queue = await findQueue(deps(c), c.req.valid("param").queueId);
  const { intake, ...point } = c.req.valid("json");
  const started = await startRemoteJoin(deps(c), queue, user, point, now(), intake);
  return c.json(ok(remoteJoinAndTicket(started)), 201);
});

const TicketParam = idParam("ticketId", "tkt");

/** The ticket behind a remote join; an unknown id and another user's look the same. */
async function remoteTicket(c: Context<AppEnv>, ticketId: string): Promise<{ queue: QueueRow; ticket: TicketView }> {
  try {
    const queue = await ticketQueueOfCaller(c, ticketId);
    return { queue, ticket: await getTicket(deps(c), queue, ticketId, now()) };
  } catch (err) {
    if (err instanceof ApiError && err.code === "NOT_FOUND") throw notFound("Remote join");
    throw err;
  }
}

const location = createRoute({
  method: "post",
  path: "/remote-join/{ticketId}/location",
  tags,
  summary: "Send the customer's position (the ticket's owner only; anyone else, API keys included, gets 404)",
  description:
    "Sets `within_geofence` when distance − accuracy ≤ the geofence radius (100 m) to the nearest location of the service, " +
    "else `travelling`, and restarts the inactivity clock (warning at 7 minutes, auto-skip at 10). `accuracy` is in metres, default 0.",
  security: SECURITY.session,
  "x-outside-callers": "the ticket's owner",
  request: {
    params: TicketParam,
    body: jsonBody(
      z
        .strictObject({ latitude: Latitude, longitude: Longitude, accuracy: z.number().min(0).max(1000).optional() })
        .openapi("RemoteJoinLocationRequest"),
    ),
  },
  responses: { 200: jsonResponse(RemoteJoinResponse, "Updated"), ...errors(409) },
});

app.openapi(location, async (c) => {
  const principal = requireCredential(c);
  const { ticketId } = c.req.valid("param");
  const { queue, ticket } = await remoteTicket(c, ticketId);
  if (principal.kind !== "session" || ticket.userId !== principal.user.id) throw notFound("Remote join");
  const body = c.req.valid("json");
  const updated = await updateRemoteLocation(
    deps(c),
    queue,
    ticketId,
    { latitude: body.latitude, longitude: body.longitude, accuracyM: body.accuracy ?? 0 },
    now(),
  );
  return c.json(ok(remoteJoinAndTicket(updated)), 200);
});

const confirm = createRoute({
  method: "post",
  path: "/remote-join/{ticketId}/confirm",
  tags,
  summary: "Confirm the customer has arrived; the ticket becomes callable",
  description:
    "`geofence` needs the status within_geofence; `qr_scan` / `nfc_scan` need a scan of this queue's QR code / NFC tag by the " +
    "ticket's owner in the last 10 minutes; `manual` needs an operator (QUEUE_OPERATE). The owner's default is geofence, " +
    "an operator's manual. Anyone else gets 404.",
  security: SECURITY.any,
  "x-outside-callers": "the ticket's owner",
  request: {
    params: TicketParam,
    body: {
      required: false,
      content: {
        "application/json": { schema: z.strictObject({ method: z.enum(CONFIRM_METHODS).optional() }).openapi("RemoteJoinConfirmRequest") },
      },
    },
  },
  responses: { 200: jsonResponse(RemoteJoinResponse, "Arrived"), ...errors(409) },
});

app.openapi(confirm, async (c) => {
  const principal = requireCredential(c);
  const { ticketId } = c.req.valid("param");
  const { queue, ticket } = await remoteTicket(c, ticketId);
  const isOwner = principal.kind === "session" && principal.user.id === ticket.userId;
  let method: ConfirmMethod | undefined = c.req.valid("json").method;
  if (isOwner) {
    method ??= "geofence";
    if (method === "manual") {
      // The owner may also be an operator of the queue; otherwise manual is not theirs to use.
      const operator = await actorIn(c, queue.organizationId).catch(() => null);
      if (!operator?.can("QUEUE_OPERATE")) throw forbidden("Manual confirmation is made by an operator");
    }
  } else {
    const actor = await actorIn(c, queue.organizationId, "Remote join");
    if (!actor.can("QUEUE_OPERATE")) throw permissionRefused("QUEUE_OPERATE", actor);
    method ??= "manual";
  }
  return c.json(ok(remoteJoinAndTicket(await confirmArrival(deps(c), queue, ticketId, method, ticket.userId, now()))), 200);
});

const get = createRoute({
  method: "get",
  path: "/remote-join/{ticketId}",
  tags,
  summary: "A remote join and its ticket",
  description: "For the ticket's owner, or a member of the queue's organization with QUEUE_VIEW.",
  security: SECURITY.any,
  "x-outside-callers": "the ticket's owner",
  request: { params: TicketParam },
  responses: { 200: jsonResponse(RemoteJoinResponse, "The remote join"), ...errors() },
});

app.openapi(get, async (c) => {
  const principal = requireCredential(c);
  const { ticketId } = c.req.valid("param");
  const { queue, ticket } = await remoteTicket(c, ticketId);
  if (!(principal.kind === "session" && principal.user.id === ticket.userId)) {
    const actor = await actorIn(c, queue.organizationId, "Remote join");
    if (!actor.can("QUEUE_VIEW")) throw permissionRefused("QUEUE_VIEW", actor);
  }
  return c.json(ok(remoteJoinAndTicket(await remoteJoinOf(deps(c), queue, ticketId, now()))), 200);
});

export default app;
