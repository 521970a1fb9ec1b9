import { createRoute, z } from "@hono/zod-openapi";
import { auditOrigin } from "../http/audit-origin";
import { authorize } from "../http/auth";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { CursorQuery, cursorListEnvelope, listMeta, listWindow } from "../http/cursor";
import { ok, okList } from "../http/respond";
import { router } from "../http/router";
import { KEY_PERMISSION_VALUES } from "../domain/permissions";
import { now } from "../lib/clock";
import { listDomains } from "./verification";
import { allowedWidgetOrigins, apiKeyRecord, createApiKey, listActiveApiKeys, revokeApiKey } from "./api-keys";
import { PublicLine } from "../http/schemas";
import { deps } from "../http/deps";
import { validationError } from "../http/errors";
import { isTwinOrganizationId } from "../lib/ids";
import { ensureTwin } from "../test-mode/twin";

const app = router();
const tags = ["API keys"];

const ApiKeyRecord = z
  .object({
    id: z.string(),
    name: z.string(),
    maskedKey: z.string().openapi({ example: "qk_live_ab12cd34…wxyz" }),
    permissions: z.array(z.string()),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
    allowedOrigins: z
      .array(z.string())
      .nullable()
      .openapi({ description: "A widget key locked to these origins (on verified domains); null = any origin" }),
    mode: z.enum(["live", "test"]).openapi({
      description: "live: the organization's own data; test: its test-mode twin (docs/test-mode.md), a qk_test_… key",
      example: "live",
    }),
    organizationId: z.string().openapi({ description: "Where the key works: the organization, or its test-mode twin (org_test…)" }),
    legacy: z.boolean().openapi({
      description:
        "Minted before keys carried a signature (docs/hot-path.md): still accepted, but checked by a lookup behind the per-address limit on wrong credentials; replace it with a new key",
      example: false,
    }),
  })
  .openapi("ApiKey");

const OrganizationParam = idParam("organizationId", "org");

const create = createRoute({
  method: "post",
  path: "/organizations/{organizationId}/api-keys",
  tags,
  summary: "Create an API key (ORG_MANAGE); the full key is in the answer only this once",
  description:
    "permissions: scopes (read:services, write:services, read:queues, write:queues, read:analytics, manage:webhooks, widget, read:audit, read:personal_data) or the shorthands read, write, admin (read:audit is in none but admin; read:personal_data, full phones and e-mails in GET /v1/events, in none). None means read.",
  security: SECURITY.any,
  request: {
    params: OrganizationParam,
    body: jsonBody(
      z
        .strictObject({
          name: PublicLine(100),
          permissions: z.array(z.enum(KEY_PERMISSION_VALUES)).max(KEY_PERMISSION_VALUES.length).optional(),
          mode: z
            .enum(["live", "test"])
            .optional()
            .openapi({
              description:
                "test: a qk_test_… key of the organization's test-mode twin (made on first use, with a copy of the catalogue: docs/test-mode.md). " +
                "Default: the mode of the organization in the path (a twin only makes test keys).",
            }),
          allowedOrigins: z
            .array(z.string().max(300))
            .min(1)
            .max(20)
            .optional()
            .openapi({
              description:
                "Only for a key whose permissions are exactly [widget]: the https origins (https://shop.example.com) allowed to use it, " +
                "each on one of the organization's verified domains. The widget routes then answer CORS only to them and 403 to any other origin or none.",
            }),
        })
        .openapi("CreateApiKeyRequest"),
    ),
  },
  responses: {
    201: jsonResponse(
      okEnvelope(ApiKeyRecord.extend({ key: z.string().openapi({ description: "The full key, shown only once" }) })),
      "Created",
    ),
    ...errors(),
  },
});

app.openapi(create, async (c) => {
  const { organizationId } = c.req.valid("param");
  // Only owners, admins and admin keys hold ORG_MANAGE, and each of them may already do
  // everything any key can grant, so a key never carries more than its creator could do.
  const actor = await authorize(c, organizationId, "ORG_MANAGE");
  const body = c.req.valid("json");
  if (body.mode === "live" && isTwinOrganizationId(organizationId)) {
    throw validationError("mode", "a test-mode organization makes test keys only; create live keys in the live organization");
  }
  // A test key belongs to the twin, so it can only ever reach the twin (docs/test-mode.md).
  const owner =
    body.mode === "test" && !isTwinOrganizationId(organizationId) ? (await ensureTwin(deps(c), organizationId, now())).id : organizationId;
  const allowedOrigins = body.allowedOrigins
    ? allowedWidgetOrigins(
        body.permissions ?? [],
        body.allowedOrigins,
        (await listDomains(deps(c), organizationId)).filter((d) => d.status === "verified").map((d) => d.domain),
      )
    : null;
  const { key, record } = await createApiKey(
    deps(c),
    c.env,
    owner,
    { name: body.name, permissions: body.permissions ?? [], allowedOrigins },
    actor.userId ?? actor.apiKeyId!,
    now(),
    auditOrigin(c, actor),
  );
  return c.json(ok({ ...apiKeyRecord(record), key }), 201);
});

const list = createRoute({
  method: "get",
  path: "/organizations/{organizationId}/api-keys",
  tags,
  summary: "Active API keys, values masked (ORG_MANAGE)",
  security: SECURITY.any,
  request: { params: OrganizationParam, query: CursorQuery },
  responses: { 200: jsonResponse(cursorListEnvelope(ApiKeyRecord), "Active keys, newest first"), ...errors() },
});

app.openapi(list, async (c) => {
  const { organizationId } = c.req.valid("param");
  await authorize(c, organizationId, "ORG_MANAGE");
  const window = listWindow(c.req.valid("query"));
  const { rows, total, hasMore } = await listActiveApiKeys(deps(c), organizationId, window);
  return c.json(
    okList(
      rows.map(apiKeyRecord),
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
  path: "/organizations/{organizationId}/api-keys/{keyId}",
  tags,
  summary: "Revoke an API key for good (ORG_MANAGE)",
  description: "A revoked key is refused with 403 KEY_REVOKED from then on.",
  security: SECURITY.any,
  request: { params: OrganizationParam.extend(idParam("keyId", "key").shape) },
  responses: { 200: jsonResponse(okEnvelope(ApiKeyRecord), "Revoked"), ...errors() },
});

app.openapi(revoke, async (c) => {
  const { organizationId, keyId } = c.req.valid("param");
  const actor = await authorize(c, organizationId, "ORG_MANAGE");
  const revoked = await revokeApiKey(deps(c), organizationId, keyId, now(), auditOrigin(c, actor));
  return c.json(ok(apiKeyRecord(revoked)), 200);
});

export default app;
