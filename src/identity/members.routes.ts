import { createRoute, z } from "@hono/zod-openapi";
import { auditOrigin } from "../http/audit-origin";
import { actorIn, authorize } from "../http/auth";
import { forbidden, validationError } from "../http/errors";
import { MAX_SCOPED_LOCATIONS, normaliseScope } from "../domain/location-scope";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { CursorQuery, cursorListEnvelope, listMeta, listWindow } from "../http/cursor";
import { ok, okList } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { isTwinOrganizationId } from "../lib/ids";
import { invitationRecord, inviteMember } from "./invitations";
import {
  changeMemberRole,
  leaveOrganization,
  listMembers,
  memberRecord,
  removeMember,
  scopeOfUnscopedRole,
  UNSCOPED_ROLES,
} from "./members";
import { locationsOfOrganization } from "../catalog/location-scope";
import { Email, InvitationRecord, RoleSchema } from "../http/schemas";
import { deps } from "../http/deps";

const app = router();
const tags = ["Members"];

const MemberRecord = z
  .object({
    userId: z.string(),
    email: z.string(),
    firstName: z.string(),
    lastName: z.string(),
    role: RoleSchema,
    locationIds: z.array(z.string()).nullable().openapi({
      description: "The locations this member works at: they see and act on nothing elsewhere. null = the whole organization",
    }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Member");

const OrganizationParam = idParam("organizationId", "org");
const MemberParams = OrganizationParam.extend(idParam("userId", "usr").shape);

/**
 * Roles per location (issue 31): the locations a manager or operator works at. Absent or null =
 * the whole organization; every id must be one of the organization's locations.
 */
const LocationIds = z
  .array(z.string().min(1).max(64))
  .min(1, "name at least one location, or null for the whole organization")
  .max(MAX_SCOPED_LOCATIONS)
  .nullable()
  .optional()
  .openapi({ description: "Locations the member works at (managers and operators only); absent or null = the whole organization" });

async function checkedScope(
  c: Parameters<typeof authorize>[0],
  organizationId: string,
  role: z.infer<typeof RoleSchema> | undefined,
  ids: string[] | null | undefined,
): Promise<string[] | null | undefined> {
  const scope = ids === undefined ? undefined : normaliseScope(ids);
  if (!scope) return scope;
  if (role && UNSCOPED_ROLES.includes(role)) throw scopeOfUnscopedRole(role);
  const known = await locationsOfOrganization(deps(c), organizationId, scope);
  const unknown = scope.find((id) => !known.has(id));
  if (unknown) throw validationError("locationIds", `${unknown} is not a location of this organization`);
  return scope;
}

function refuseOwnerRole(role: z.infer<typeof RoleSchema>): asserts role is Exclude<typeof role, "owner"> {
  if (role === "owner") throw forbidden("Nobody becomes owner through the members routes; use transfer-ownership");
}

const list = createRoute({
  method: "get",
  path: "/organizations/{organizationId}/members",
  tags,
  summary: "The organization's members (any member; API keys need admin)",
  security: SECURITY.any,
  request: { params: OrganizationParam, query: CursorQuery },
  responses: { 200: jsonResponse(cursorListEnvelope(MemberRecord), "Members, oldest first"), ...errors() },
});

app.openapi(list, async (c) => {
  const { organizationId } = c.req.valid("param");
  const actor = await actorIn(c, organizationId);
  // Member emails are personal data: a key sees them only if it could manage them.
  if (actor.apiKeyId && !actor.can("ORG_MANAGE")) throw forbidden("Listing members needs an admin key");
  const window = listWindow(c.req.valid("query"));
  const { rows, total, hasMore } = await listMembers(deps(c), organizationId, window);
  return c.json(
    okList(
      rows.map(memberRecord),
      listMeta(
        rows.map((r) => r.userId),
        total,
        window,
        hasMore,
      ),
    ),
    200,
  );
});

const add = createRoute({
  method: "post",
  path: "/organizations/{organizationId}/members",
  tags,
  summary: "Invite a person to become a member (ORG_MANAGE)",
  description:
    "Sends an invitation valid 7 days (an in-app notification if the e-mail has an account, and an e-mail). " +
    "Membership starts only when the invitee accepts (`POST /v1/invitations/{invitationId}/accept`). The answer is the " +
    "same `202` whether or not the e-mail has an account. Inviting a pending e-mail again refreshes its invitation. " +
    "`owner` cannot be given here: use transfer-ownership.",
  security: SECURITY.any,
  request: {
    params: OrganizationParam,
    body: jsonBody(z.strictObject({ email: Email, role: RoleSchema, locationIds: LocationIds }).openapi("AddMemberRequest")),
  },
  responses: { 202: jsonResponse(okEnvelope(InvitationRecord), "Invitation sent"), ...errors(409) },
});

app.openapi(add, async (c) => {
  const { organizationId } = c.req.valid("param");
  const { email, role, locationIds } = c.req.valid("json");
  const actor = await authorize(c, organizationId, "ORG_MANAGE");
  // People sign in to the live organization only: a test-mode twin is reached by test keys (docs/test-mode.md).
  if (isTwinOrganizationId(organizationId))
    throw forbidden("A test-mode organization has no members: invite people to the live organization");
  refuseOwnerRole(role);
  const scope = await checkedScope(c, organizationId, role, locationIds);
  const at = now();
  const invitation = await inviteMember(
    deps(c),
    { organizationId, email, role, locationIds: scope, invitedBy: actor.userId ?? actor.apiKeyId, origin: new URL(c.req.url).origin },
    at,
  );
  return c.json(ok(invitationRecord(invitation, at)), 202);
});

const update = createRoute({
  method: "patch",
  path: "/organizations/{organizationId}/members/{userId}",
  tags,
  summary: "Change a member's role or locations (ORG_MANAGE); the owner's role only changes by transfer",
  description:
    "`locationIds` limits a manager or operator to some locations (null: the whole organization again); becoming admin drops the limit.",
  security: SECURITY.any,
  request: {
    params: MemberParams,
    body: jsonBody(
      z
        .strictObject({ role: RoleSchema.optional(), locationIds: LocationIds })
        .refine((b) => b.role !== undefined || b.locationIds !== undefined, { message: "give role or locationIds", path: ["role"] })
        .openapi("UpdateMemberRequest"),
    ),
  },
  responses: { 200: jsonResponse(okEnvelope(MemberRecord), "Updated"), ...errors() },
});

app.openapi(update, async (c) => {
  const { organizationId, userId } = c.req.valid("param");
  const { role, locationIds } = c.req.valid("json");
  const actor = await authorize(c, organizationId, "ORG_MANAGE");
  if (role) refuseOwnerRole(role);
  const scope = await checkedScope(c, organizationId, role, locationIds);
  const member = await changeMemberRole(deps(c), organizationId, userId, { role, locationIds: scope }, now(), auditOrigin(c, actor));
  return c.json(ok(memberRecord(member)), 200);
});

const remove = createRoute({
  method: "delete",
  path: "/organizations/{organizationId}/members/{userId}",
  tags,
  summary: "Remove a member (ORG_MANAGE), or leave: any member may remove themself, except the owner",
  security: SECURITY.any,
  request: { params: MemberParams },
  responses: {
    200: jsonResponse(okEnvelope(z.object({ userId: z.string(), removed: z.literal(true) })), "Removed"),
    ...errors(),
  },
});

app.openapi(remove, async (c) => {
  const { organizationId, userId } = c.req.valid("param");
  const actor = await actorIn(c, organizationId);
  if (actor.userId === userId) {
    // Leaving needs no permission: nobody is kept in an organization against their will.
    await leaveOrganization(deps(c), organizationId, userId);
  } else {
    await authorize(c, organizationId, "ORG_MANAGE");
    await removeMember(deps(c), organizationId, userId, auditOrigin(c, actor), now());
  }
  return c.json(ok({ userId, removed: true as const }), 200);
});

export default app;
