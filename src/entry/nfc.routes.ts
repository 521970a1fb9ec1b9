import { createRoute, z } from "@hono/zod-openapi";
import { authorize, organizationOfRequest, requireCredential, requireUser } from "../http/auth";
import { authorizeResources, guarded } from "../access/guard";
import { notFound } from "../http/errors";
import { errors, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { CursorQuery, cursorListEnvelope, listMeta, listWindow } from "../http/cursor";
import { ok, okList } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { assertNotArchived, queueTarget } from "./channel-targets";
import { scanNfcTag, scanOutcomeRecord } from "./entry-scans";
import { ScanResult } from "./qr.routes";
import { createNfcTag, listNfcTags, nfcTagRecord, uniqueDevicesOf, updateNfcTag } from "./nfc-tags";
import { PublicLine } from "../http/schemas";
import { deps } from "../http/deps";

const app = router();
const tags = ["NFC tags"];

const NfcId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9:_-]+$/, "letters, digits, ':', '_' and '-' only")
  .openapi({ description: "The tag's physical identifier (e.g. its UID), case-sensitive", example: "04:A2:3B:1C:5D:80" });
const Kind = z.enum(["physical", "virtual", "mobile_wallet"]);
const LocationName = PublicLine(200);
const Latitude = z.number().min(-90).max(90);
const Longitude = z.number().min(-180).max(180);
const QueueId = z.string().min(1).max(64);

const NfcTagRecord = z
  .object({
    id: z.string(),
    nfcId: z.string(),
    queueId: z.string(),
    kind: Kind,
    locationName: z.string(),
    latitude: z.number(),
    longitude: z.number(),
    status: z.enum(["enabled", "disabled"]),
    scanCount: z.number().int(),
    uniqueDevices: z.number().int(),
    lastScannedAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("NfcTag");

const nfcIdParam = z.object({ nfcId: NfcId.openapi({ param: { name: "nfcId", in: "path" } }) });

const create = createRoute({
  method: "post",
  path: "/nfc/tags",
  tags,
  summary: "Register an NFC tag for a queue",
  description:
    "A scan of the tag joins `queueId`; the position is where the tag is placed (scans over 200 m from it are refused). " +
    "`kind` defaults to physical. Needs QUEUE_MANAGE in the queue's organization. A registered nfcId gets 409 CONFLICT.",
  security: SECURITY.any,
  request: {
    body: jsonBody(
      z
        .strictObject({
          nfcId: NfcId,
          queueId: QueueId,
          locationName: LocationName,
          latitude: Latitude,
          longitude: Longitude,
          kind: Kind.optional(),
        })
        .openapi("CreateNfcTagRequest"),
    ),
  },
  responses: { 201: jsonResponse(okEnvelope(NfcTagRecord), "Registered"), ...errors(409) },
});

app.openapi(create, async (c) => {
  requireCredential(c);
  const body = c.req.valid("json");
  const d = deps(c);
  await authorizeResources(c, "QUEUE_MANAGE", { queueIds: [body.queueId] });
  const queue = await queueTarget(d, body.queueId);
  assertNotArchived(queue);
  const row = await createNfcTag(d, { ...body, kind: body.kind ?? "physical", organizationId: queue.organizationId }, now());
  return c.json(ok(nfcTagRecord(row, 0)), 201);
});

const get = createRoute({
  method: "get",
  path: "/nfc/tags/{nfcId}",
  tags,
  summary: "A tag's status and scan statistics, by its physical identifier",
  security: SECURITY.any,
  request: { params: nfcIdParam },
  responses: { 200: jsonResponse(okEnvelope(NfcTagRecord), "The tag"), ...errors() },
});

app.openapi(get, async (c) => {
  requireCredential(c);
  const { nfcId } = c.req.valid("param");
  const d = deps(c);
  const { row: tag } = guarded(c, "nfcTag", "QUEUE_VIEW");
  return c.json(ok(nfcTagRecord(tag, await uniqueDevicesOf(d, tag.id))), 200);
});

const update = createRoute({
  method: "patch",
  path: "/nfc/tags/{nfcId}",
  tags,
  summary: "Disable, re-enable, move or re-point a tag",
  description:
    "`enabled: false` makes scans of the tag refused until it is enabled again; statistics are kept. " +
    "A new queueId must be a queue of the tag's organization. Needs QUEUE_MANAGE.",
  security: SECURITY.any,
  request: {
    params: nfcIdParam,
    body: jsonBody(
      z
        .strictObject({
          enabled: z.boolean().optional(),
          locationName: LocationName.optional(),
          latitude: Latitude.optional(),
          longitude: Longitude.optional(),
          queueId: QueueId.optional(),
        })
        .refine((b) => Object.values(b).some((v) => v !== undefined), "name at least one field to change")
        .openapi("UpdateNfcTagRequest"),
    ),
  },
  responses: { 200: jsonResponse(okEnvelope(NfcTagRecord), "The updated tag"), ...errors(409) },
});

app.openapi(update, async (c) => {
  requireCredential(c);
  const { nfcId } = c.req.valid("param");
  const changes = c.req.valid("json");
  const d = deps(c);
  const { row: tag } = guarded(c, "nfcTag", "QUEUE_MANAGE");
  if (changes.queueId !== undefined && changes.queueId !== tag.queueId) {
    const target = await authorizeResources(c, "QUEUE_MANAGE", { queueIds: [changes.queueId] });
    // A tag never moves to another organization, even one the caller also manages.
    if (target.organizationId !== tag.organizationId) throw notFound("Queue");
    const queue = await queueTarget(d, changes.queueId);
    assertNotArchived(queue);
  }
  const row = await updateNfcTag(d, tag.id, changes, now());
  return c.json(ok(nfcTagRecord(row, await uniqueDevicesOf(d, tag.id))), 200);
});

const list = createRoute({
  method: "get",
  path: "/nfc/tags",
  tags,
  summary: "The organization's NFC tags, newest first",
  description: "Organization from the API key, the X-Organization-Id header, or the user's only membership. Needs QUEUE_VIEW.",
  security: SECURITY.any,
  request: { query: CursorQuery.extend({ queueId: QueueId.optional() }) },
  responses: { 200: jsonResponse(cursorListEnvelope(NfcTagRecord), "A page of tags"), ...errors() },
});

app.openapi(list, async (c) => {
  const query = c.req.valid("query");
  const organizationId = await organizationOfRequest(c);
  await authorize(c, organizationId, "QUEUE_VIEW");
  const window = listWindow(query);
  const { rows, total, hasMore } = await listNfcTags(deps(c), organizationId, query, window);
  return c.json(
    okList(
      rows.map((r) => nfcTagRecord(r.tag, r.uniqueDevices)),
      listMeta(
        rows.map((r) => r.tag.id),
        total,
        window,
        hasMore,
      ),
    ),
    200,
  );
});

const scan = createRoute({
  method: "post",
  path: "/nfc/scan",
  tags,
  summary: "Scan an NFC tag: join its queue",
  description:
    "Needs a user session. Refused when the tag is disabled (409 INVALID_STATE) or the scan is over 200 m from the tag " +
    "(422 OUT_OF_RANGE). An accepted scan counts in the tag's statistics (a device is the user's phone model and OS version) " +
    "and is recorded (it confirms a remote join by nfc_scan for 10 minutes). A scanner who already holds a live ticket in the " +
    "queue gets it back (`already_in_queue`) instead of a second one.",
  security: SECURITY.session,
  request: {
    body: jsonBody(
      z
        .strictObject({
          nfcId: NfcId,
          latitude: Latitude,
          longitude: Longitude,
          deviceInfo: z
            .strictObject({ phoneModel: z.string().trim().min(1).max(100), osVersion: z.string().trim().min(1).max(50) })
            .optional(),
        })
        .openapi("NfcScanRequest"),
    ),
  },
  responses: {
    200: jsonResponse(okEnvelope(ScanResult), "Already in the queue"),
    201: jsonResponse(okEnvelope(ScanResult), "Joined: a new ticket"),
    ...errors(409, 422),
  },
});

app.openapi(scan, async (c) => {
  const { user } = requireUser(c);
  const outcome = await scanNfcTag(deps(c), user, c.req.valid("json"), now());
  return c.json(ok(scanOutcomeRecord(outcome)), outcome.action === "joined" ? 201 : 200);
});

export default app;
