import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { authorize, requireCredential } from "../http/auth";
import type { AppEnv } from "../http/context";
import { forbidden } from "../http/errors";
import { errors, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { isTwinOrganizationId } from "../lib/ids";
import { isoOrNull } from "../lib/time";
import { now } from "../lib/clock";
import { findTwin, resetTwin, type OrganizationRow } from "./twin";

// /v1/test/*: what only a test key may do (docs/test-mode.md).

const app = router();
const tags = ["Test mode"];

const TestMode = z
  .object({
    organizationId: z.string().openapi({ description: "The test-mode twin the key works on", example: "org_testd3m0000000000000" }),
    liveOrganizationId: z.string().openapi({ description: "The live organization it mirrors (never reachable with a test key)" }),
    catalogueCopiedAt: z.string().nullable().openapi({ description: "When the live catalogue was last copied in" }),
  })
  .openapi("TestMode");

function twinOfKey(c: Context<AppEnv>): string {
  const principal = requireCredential(c);
  if (principal.kind !== "apiKey" || !isTwinOrganizationId(principal.organizationId)) {
    throw forbidden("Only a test key (qk_test_…, created with mode: test) reaches /v1/test");
  }
  return principal.organizationId;
}

function testModeRecord(twin: OrganizationRow) {
  return { organizationId: twin.id, liveOrganizationId: twin.liveOrganizationId!, catalogueCopiedAt: isoOrNull(twin.catalogueCopiedAt) };
}

app.openapi(
  createRoute({
    method: "get",
    path: "/test",
    tags,
    summary: "The test-mode twin this test key works on",
    security: SECURITY.apiKey,
    responses: { 200: jsonResponse(okEnvelope(TestMode), "The twin"), ...errors() },
  }),
  async (c) => {
    const twinId = twinOfKey(c);
    await authorize(c, twinId, "QUEUE_VIEW");
    const twin = await findTwin(c.env, twinId);
    if (!twin) throw forbidden("This test key's twin was reset away; use a key of the current twin");
    return c.json(ok(testModeRecord(twin)), 200);
  },
);

app.openapi(
  createRoute({
    method: "post",
    path: "/test/reset",
    tags,
    summary: "Empty the test-mode twin and copy the live catalogue in again (an admin test key)",
    description:
      "Every ticket, webhook, event, notification and analytics figure of the twin is gone; the test keys keep working, on a new twin " +
      "(a new organizationId in the answer) holding a fresh copy of the live catalogue, with new ids. Nothing live is touched.",
    security: SECURITY.apiKey,
    responses: { 200: jsonResponse(okEnvelope(TestMode), "The new, empty twin"), ...errors() },
  }),
  async (c) => {
    const twinId = twinOfKey(c);
    await authorize(c, twinId, "ORG_MANAGE");
    const twin = await resetTwin(c.env, twinId, now());
    return c.json(ok(testModeRecord(twin)), 200);
  },
);

export default app;
