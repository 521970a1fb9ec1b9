import { createRoute, z } from "@hono/zod-openapi";
import { authorize, requireUser } from "../http/auth";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { CursorQuery, cursorListEnvelope, listMeta, listWindow } from "../http/cursor";
import { ok, okList } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { answerInvitation, invitationRecord, listMyInvitations, listOrganizationInvitations, revokeInvitation } from "./invitations";
import { setDefaultOrganization } from "./members";
import { InvitationRecord } from "../http/schemas";
import { deps } from "../http/deps";

// Invitations (issue 26): the organization's side (list, revoke) and the invitee's side (see
// mine, accept, decline), plus the user's default organization for requests that name none.

const app = router();
const tags = ["Members"];

const OrganizationParam = idParam("organizationId", "org");
const InvitationParam = idParam("invitationId", "ivt");

const listPending = createRoute({
  method: "get",
  path: "/organizations/{organizationId}/invitations",
  tags,
  summary: "Pending invitations of the organization, newest first (ORG_MANAGE)",
  security: SECURITY.any,
  request: { params: OrganizationParam, query: CursorQuery },
  responses: {
    200: jsonResponse(cursorListEnvelope(InvitationRecord), "Pending invitations (expired ones show status expired)"),
    ...errors(),
  },
});

app.openapi(listPending, async (c) => {
  const { organizationId } = c.req.valid("param");
  await authorize(c, organizationId, "ORG_MANAGE");
  const window = listWindow(c.req.valid("query"));
  const { rows, total, hasMore } = await listOrganizationInvitations(deps(c), organizationId, window);
  const at = now();
  return c.json(
    okList(
      rows.map((r) => invitationRecord(r, at)),
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
  path: "/organizations/{organizationId}/invitations/{invitationId}",
  tags,
  summary: "Revoke a pending invitation (ORG_MANAGE)",
  security: SECURITY.any,
  request: { params: OrganizationParam.extend(InvitationParam.shape) },
  responses: { 200: jsonResponse(okEnvelope(InvitationRecord), "Revoked"), ...errors(409) },
});

app.openapi(revoke, async (c) => {
  const { organizationId, invitationId } = c.req.valid("param");
  await authorize(c, organizationId, "ORG_MANAGE");
  const at = now();
  const row = await revokeInvitation(deps(c), organizationId, invitationId, at);
  return c.json(ok(invitationRecord(row, at)), 200);
});

const mine = createRoute({
  method: "get",
  path: "/invitations",
  tags,
  summary: "Pending invitations addressed to the signed-in user's e-mail",
  security: SECURITY.session,
  responses: { 200: jsonResponse(okEnvelope(z.array(InvitationRecord)), "Up to 100, newest first"), ...errors() },
});

app.openapi(mine, async (c) => {
  const { user } = requireUser(c);
  const at = now();
  const rows = await listMyInvitations(deps(c), user, at);
  return c.json(ok(rows.map((r) => invitationRecord(r.invitation, at, r.organizationName))), 200);
});

function answerRoute(answer: "accept" | "decline") {
  return createRoute({
    method: "post",
    path: `/invitations/{invitationId}/${answer}`,
    tags,
    summary:
      answer === "accept"
        ? "Accept an invitation: membership starts now (the invitee's session, signed in with the invited e-mail)"
        : "Decline an invitation (the invitee's session)",
    description:
      "Someone else's invitation answers 404; an invitation already answered, revoked or past its 7 days answers " +
      "409 INVALID_STATE with its status.",
    security: SECURITY.session,
    "x-outside-callers": "the invitee",
    request: { params: InvitationParam },
    responses: { 200: jsonResponse(okEnvelope(InvitationRecord), answer === "accept" ? "Accepted" : "Declined"), ...errors(409) },
  });
}

app.openapi(answerRoute("accept"), async (c) => {
  const { user } = requireUser(c);
  const at = now();
  const row = await answerInvitation(deps(c), user, c.req.valid("param").invitationId, "accepted", at);
  return c.json(ok(invitationRecord(row, at)), 200);
});

app.openapi(answerRoute("decline"), async (c) => {
  const { user } = requireUser(c);
  const at = now();
  const row = await answerInvitation(deps(c), user, c.req.valid("param").invitationId, "declined", at);
  return c.json(ok(invitationRecord(row, at)), 200);
});

const setDefault = createRoute({
  method: "patch",
  path: "/auth/me",
  tags: ["Session"],
  summary: "Choose the default organization (used when a request sends no X-Organization-Id)",
  description:
    "`defaultOrganizationId` must be one of your memberships (else 404 on that field); `null` clears it. With several " +
    "memberships and no default, routes without an organization in their path need `X-Organization-Id`.",
  security: SECURITY.session,
  request: {
    body: jsonBody(z.strictObject({ defaultOrganizationId: z.string().min(1).max(64).nullable() }).openapi("UpdateMeRequest")),
  },
  responses: { 200: jsonResponse(okEnvelope(z.object({ defaultOrganizationId: z.string().nullable() })), "Saved"), ...errors() },
});

app.openapi(setDefault, async (c) => {
  const { user } = requireUser(c);
  const { defaultOrganizationId } = c.req.valid("json");
  await setDefaultOrganization(deps(c), user.id, defaultOrganizationId, now());
  return c.json(ok({ defaultOrganizationId }), 200);
});

export default app;
