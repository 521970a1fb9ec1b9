import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../db/client";
import { auditOrigin } from "../http/audit-origin";
import { actorIn, authorize } from "../http/auth";
import { forbidden } from "../http/errors";
import {
  errors,
  idParam,
  jsonBody,
  jsonResponse,
  listEnvelope,
  okEnvelope,
  pageMeta,
  pageWindow,
  PaginationQuery,
  SECURITY,
} from "../http/openapi";
import { ok, okList } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { invitationRecord, inviteMember } from "../services/invitations";
import { changeMemberRole, leaveOrganization, listMembers, memberRecord, removeMember } from "../services/members";
import { Email, InvitationRecord, RoleSchema } from "./schemas";

const app = router();
const tags = ["Members"];

const MemberRecord = z
  .object({
    userId: z.string(),
    email: z.string(),
    firstName: z.string(),
    lastName: z.string(),
    role: RoleSchema,
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Member");

const OrganizationParam = idParam("organizationId", "org");
const MemberParams = OrganizationParam.extend(idParam("userId", "usr").shape);

function refuseOwnerRole(role: z.infer<typeof RoleSchema>): asserts role is Exclude<typeof role, "owner"> {
  if (role === "owner") throw forbidden("Nobody becomes owner through the members routes; use transfer-ownership");
}

const list = createRoute({
  method: "get",
  path: "/organizations/{organizationId}/members",
  tags,
  summary: "The organization's members (any member; API keys need admin)",
  security: SECURITY.any,
  request: { params: OrganizationParam, query: PaginationQuery },
  responses: { 200: jsonResponse(listEnvelope(MemberRecord), "Members, oldest first"), ...errors() },
});

app.openapi(list, async (c) => {
  const { organizationId } = c.req.valid("param");
  const actor = await actorIn(c, organizationId);
  // Member emails are personal data: a key sees them only if it could manage them.
  if (actor.apiKeyId && !actor.can("ORG_MANAGE")) throw forbidden("Listing members needs an admin key");
  const window = pageWindow(c.req.valid("query"));
  const { rows, total } = await listMembers(database(c.env.DB), organizationId, window);
  return c.json(okList(rows.map(memberRecord), pageMeta(total, window)), 200);
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
    body: jsonBody(z.strictObject({ email: Email, role: RoleSchema }).openapi("AddMemberRequest")),
  },
  responses: { 202: jsonResponse(okEnvelope(InvitationRecord), "Invitation sent"), ...errors(409) },
});

app.openapi(add, async (c) => {
  const { organizationId } = c.req.valid("param");
  const { email, role } = c.req.valid("json");
  const actor = await authorize(c, organizationId, "ORG_MANAGE");
  refuseOwnerRole(role);
  const at = now();
  const invitation = await inviteMember(
    c.env,
    { organizationId, email, role, invitedBy: actor.userId ?? actor.apiKeyId, origin: new URL(c.req.url).origin },
    at,
  );
  return c.json(ok(invitationRecord(invitation, at)), 202);
});

const update = createRoute({
  method: "patch",
  path: "/organizations/{organizationId}/members/{userId}",
  tags,
  summary: "Change a member's role (ORG_MANAGE); the owner's role only changes by transfer",
  security: SECURITY.any,
  request: {
    params: MemberParams,
    body: jsonBody(z.strictObject({ role: RoleSchema }).openapi("UpdateMemberRequest")),
  },
  responses: { 200: jsonResponse(okEnvelope(MemberRecord), "Updated"), ...errors() },
});

app.openapi(update, async (c) => {
  const { organizationId, userId } = c.req.valid("param");
  const { role } = c.req.valid("json");
  const actor = await authorize(c, organizationId, "ORG_MANAGE");
  refuseOwnerRole(role);
  const member = await changeMemberRole(database(c.env.DB), organizationId, userId, role, now(), auditOrigin(c, actor));
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
    await leaveOrganization(database(c.env.DB), organizationId, userId);
  } else {
    await authorize(c, organizationId, "ORG_MANAGE");
    await removeMember(database(c.env.DB), organizationId, userId, auditOrigin(c, actor), now());
  }
  return c.json(ok({ userId, removed: true as const }), 200);
});

export default app;
