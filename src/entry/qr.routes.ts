import { createRoute, z } from "@hono/zod-openapi";
import { QR_PURPOSES } from "../domain/qr";
import { authorize, organizationOfRequest, requireCredential, requireUser } from "../http/auth";
import { authorizeResources, guarded } from "../access/guard";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { CursorQuery, cursorListEnvelope, listMeta, listWindow } from "../http/cursor";
import { ok, okList } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { qrPng, qrSvg, QR_IMAGE_SIZE } from "./qr-images";
import { assertNotArchived } from "./channel-targets";
import { scanOutcomeRecord, scanQrToken } from "./entry-scans";
import { QueueRecord } from "../tickets/queues.routes";
import { TicketRecord } from "../tickets/tickets.routes";
import { assertQueueOfService, createQrToken, listQrTokens, qrTokenRecord, resolveQrTarget, revokeQrToken } from "./qr-tokens";
import { deps } from "../http/deps";

const app = router();
const tags = ["QR codes"];

const Purpose = z.enum(QR_PURPOSES);

const generate = createRoute({
  method: "get",
  path: "/qr/generate",
  tags,
  summary: "Draw a QR code for a token",
  description:
    "Public: no credential needed (counted under the per-IP limit). The image depends only on the query, so it is cacheable for a day. " +
    "Error correction level M, a 4-module quiet zone, each module a whole number of pixels, centred in a size × size image. " +
    "A token too long to fit the size gets 400 on `size` with `details.minimum`.",
  security: SECURITY.none,
  request: {
    query: z.object({
      token: z.string().min(1).max(512).openapi({ description: "The text to encode, 1–512 characters (usually a QR token's `token`)" }),
      size: z.coerce
        .number()
        .int()
        .min(QR_IMAGE_SIZE.min)
        .max(QR_IMAGE_SIZE.max)
        .default(QR_IMAGE_SIZE.default)
        .openapi({ description: "Width and height in pixels, 64–1024, default 200" }),
      format: z.enum(["png", "svg"]).default("png").openapi({ description: "png (default) or svg" }),
    }),
  },
  responses: {
    200: {
      description: "The QR code image",
      content: {
        "image/png": { schema: z.string().openapi({ format: "binary" }) },
        "image/svg+xml": { schema: z.string() },
      },
    },
    ...errors(),
  },
});

const IMAGE_CACHE = "public, max-age=86400, immutable";

app.openapi(generate, async (c) => {
  const { token, size, format } = c.req.valid("query");
  if (format === "svg") {
    return c.body(qrSvg(token, size), 200, { "Content-Type": "image/svg+xml; charset=utf-8", "Cache-Control": IMAGE_CACHE });
  }
  const png = await qrPng(token, size);
  return c.body(png, 200, { "Content-Type": "image/png", "Cache-Control": IMAGE_CACHE });
});

const QrTokenRecord = z
  .object({
    id: z.string(),
    purpose: Purpose,
    serviceId: z.string().nullable(),
    queueId: z.string().nullable(),
    token: z.string().openapi({ description: "The opaque string to print in the code" }),
    status: z.enum(["active", "expired", "used", "revoked"]),
    expiresAt: z.string().nullable(),
    usedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
    createdAt: z.string(),
    imageUrl: z.string().openapi({ description: "Relative URL of the PNG (add &format=svg&size=… as needed)" }),
  })
  .openapi("QrToken");

const FutureInstant = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()])
  .transform((v) => Date.parse(v))
  .refine((ms) => ms > now(), "must be in the future")
  .openapi({ description: "ISO 8601 with Z or an offset, or a date (00:00 UTC)", example: "2026-12-31T23:59:59Z" });

const create = createRoute({
  method: "post",
  path: "/qr-tokens",
  tags,
  summary: "Create a QR token",
  description:
    "queue_join and single_use_invite need `queueId`; service_checkin needs `serviceId` (and no queueId); " +
    "verification and operator_access need one of the two. Given both, the queue must belong to the service. " +
    "The organization is the queue's or service's; the caller needs QUEUE_MANAGE there.",
  security: SECURITY.any,
  request: {
    body: jsonBody(
      z
        .strictObject({
          purpose: Purpose,
          serviceId: z.string().min(1).max(64).optional(),
          queueId: z.string().min(1).max(64).optional(),
          expiresAt: FutureInstant.optional(),
        })
        .openapi("CreateQrTokenRequest"),
    ),
  },
  responses: { 201: jsonResponse(okEnvelope(QrTokenRecord), "Created"), ...errors(409) },
});

app.openapi(create, async (c) => {
  requireCredential(c);
  const body = c.req.valid("json");
  const d = deps(c);
  const target = await resolveQrTarget(d, body.purpose, body);
  const { actor } = await authorizeResources(c, "QUEUE_MANAGE", { queueIds: [body.queueId], serviceIds: [body.serviceId] });
  assertQueueOfService(target, body.serviceId);
  if (target.queue) assertNotArchived(target.queue);
  const at = now();
  const row = await createQrToken(d, { purpose: body.purpose, target, expiresAt: body.expiresAt ?? null, createdById: actor.userId }, at);
  return c.json(ok(qrTokenRecord(row, at)), 201);
});

const list = createRoute({
  method: "get",
  path: "/qr-tokens",
  tags,
  summary: "The organization's QR tokens (revoked ones left out), newest first",
  description: "Organization from the API key, the X-Organization-Id header, or the user's only membership. Needs QUEUE_VIEW.",
  security: SECURITY.any,
  request: {
    query: CursorQuery.extend({
      purpose: Purpose.optional(),
      queueId: z.string().max(64).optional(),
      serviceId: z.string().max(64).optional(),
    }),
  },
  responses: { 200: jsonResponse(cursorListEnvelope(QrTokenRecord), "A page of tokens"), ...errors() },
});

app.openapi(list, async (c) => {
  const query = c.req.valid("query");
  const organizationId = await organizationOfRequest(c);
  await authorize(c, organizationId, "QUEUE_VIEW");
  const window = listWindow(query);
  const { rows, total, hasMore } = await listQrTokens(deps(c), organizationId, query, window);
  const at = now();
  return c.json(
    okList(
      rows.map((r) => qrTokenRecord(r, at)),
      listMeta(
        rows.map((r) => r.id),
        total,
        window,
        hasMore,
      ),
    ),
    200,
  );
});

const revoke = createRoute({
  method: "delete",
  path: "/qr-tokens/{id}",
  tags,
  summary: "Revoke a QR token",
  description: "Scans of a revoked token are refused from then on; it leaves the listing. Needs QUEUE_MANAGE.",
  security: SECURITY.any,
  request: { params: idParam("id", "qrt") },
  responses: { 200: jsonResponse(okEnvelope(QrTokenRecord), "The revoked token"), ...errors() },
});

app.openapi(revoke, async (c) => {
  requireCredential(c);
  const { id } = c.req.valid("param");
  const d = deps(c);
  guarded(c, "qrToken", "QUEUE_MANAGE");
  const at = now();
  return c.json(ok(qrTokenRecord(await revokeQrToken(d, id, at), at)), 200);
});

export const ScanResult = z
  .object({
    action: z.enum(["joined", "already_in_queue", "present", "operator_access"]).openapi({
      description:
        "joined: a new ticket; already_in_queue: the scanner's live ticket in that queue (no second one); " +
        "present: the scanner's ticket marked present; operator_access: the queues the code opens",
    }),
    ticket: z.union([TicketRecord, z.null()]),
    queues: z.array(QueueRecord),
  })
  .openapi("ScanResult");

const scan = createRoute({
  method: "post",
  path: "/qr/scan",
  tags,
  summary: "Scan a QR code",
  description:
    "Needs a user session. queue_join and service_checkin (the service's first active queue) join; single_use_invite joins once, " +
    "then the code is used; verification marks the scanner's waiting or called ticket present (a remote join arrives); " +
    "operator_access answers the queues to an operator of the organization (403 for anyone else). " +
    "A scanner who already holds a live ticket in the queue gets it back instead of a second one. " +
    "Refused: unknown code 404, expired or withdrawn 410 QR_TOKEN_EXPIRED, used 410 QR_TOKEN_USED, " +
    "farther than the allowed radius from the service's nearest location 422 OUT_OF_RANGE. Every accepted scan is recorded " +
    "(it confirms a remote join by qr_scan for 10 minutes).",
  security: SECURITY.session,
  request: {
    body: jsonBody(
      z
        .strictObject({
          token: z.string().min(1).max(512),
          latitude: z.number().min(-90).max(90),
          longitude: z.number().min(-180).max(180),
        })
        .openapi("QrScanRequest"),
    ),
  },
  responses: {
    200: jsonResponse(okEnvelope(ScanResult), "Done (no new ticket)"),
    201: jsonResponse(okEnvelope(ScanResult), "Joined: a new ticket"),
    ...errors(409, 410, 422),
  },
});

app.openapi(scan, async (c) => {
  const { user } = requireUser(c);
  const outcome = await scanQrToken(deps(c), user, c.req.valid("json"), now());
  return c.json(ok(scanOutcomeRecord(outcome)), outcome.action === "joined" ? 201 : 200);
});

export default app;
