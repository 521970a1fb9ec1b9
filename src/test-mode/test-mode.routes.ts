import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { authorize, requireCredential } from "../http/auth";
import type { AppEnv } from "../http/context";
import { forbidden } from "../http/errors";
import { errors, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { isTwinOrganizationId, randomString } from "../lib/ids";
import { notFound } from "../http/errors";
import { findQueue } from "../tickets/queues";
import { newSimulation, type SimulationState } from "./simulation";
import { isoOrNull } from "../lib/time";
import { now } from "../lib/clock";
import { findTwin, resetTwin, type OrganizationRow } from "./twin";
import { deps } from "../http/deps";

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
    const twin = await findTwin(deps(c), twinId);
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
    const twin = await resetTwin(deps(c), twinId, now());
    return c.json(ok(testModeRecord(twin)), 200);
  },
);

// ---- simulated days (docs/test-mode.md, "Simulated day") ------------------------------------

const SimulationRequest = z
  .object({
    queueId: z.string().min(1).openapi({ description: "A queue of the twin" }),
    arrivalsPerHour: z.number().min(0).max(3600).openapi({ description: "Mean arrivals per virtual hour (Poisson)", example: 120 }),
    serviceMinutes: z.number().min(0.1).max(480).openapi({ description: "Mean service time (exponential)", example: 3 }),
    noShowRate: z.number().min(0).max(1).openapi({ description: "Share of called visitors who never come (marked absent)", example: 0.1 }),
    durationMinutes: z
      .number()
      .int()
      .min(1)
      .max(1440)
      .openapi({ description: "Length of the simulated day (virtual minutes)", example: 10 }),
    desks: z.number().int().min(1).max(50).optional().openapi({ description: "Desks calling the line (default 1)", example: 2 }),
    speed: z.number().min(1).max(60).openapi({ description: "Virtual minutes per real minute, at most 60", example: 60 }),
    seed: z
      .number()
      .int()
      .optional()
      .openapi({ description: "Seed of the random draws: the same seed gives the same day (default random)" }),
  })
  .openapi("SimulationRequest");

const Simulation = z
  .object({
    id: z.string().openapi({ example: "sim_0000000000000000000a" }),
    queueId: z.string(),
    status: z.enum(["running", "finished", "stopped", "failed"]),
    virtualStart: z.string().openapi({ description: "Virtual time of the day's start (the real time it was created)" }),
    virtualNow: z.string().openapi({ description: "How far the virtual clock has run" }),
    virtualEnd: z.string(),
    joined: z.number().int(),
    called: z.number().int(),
    served: z.number().int(),
    noShows: z.number().int(),
    seed: z.number().int(),
    error: z.string().nullable().openapi({ description: "Why a failed simulation stopped" }),
  })
  .openapi("Simulation");

const SimulationParams = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });

function simulationRecord(s: SimulationState) {
  return {
    id: s.id,
    queueId: s.spec.queueId,
    status: s.status,
    virtualStart: new Date(s.virtualStart).toISOString(),
    virtualNow: new Date(s.virtualNow).toISOString(),
    virtualEnd: new Date(s.virtualEnd).toISOString(),
    joined: s.joined,
    called: s.called,
    served: s.served,
    noShows: s.noShows,
    seed: s.spec.seed,
    error: s.error,
  };
}

function simulationObject(c: Context<AppEnv>, id: string) {
  return c.env.SIMULATION.get(c.env.SIMULATION.idFromName(id));
}

/** The twin's simulation, or 404 (another organization's, or no such id). */
async function ownSimulation(c: Context<AppEnv>, twinId: string, id: string) {
  if (!/^sim_[0-9a-z]{20}$/.test(id)) throw notFound("Simulation");
  const s = await simulationObject(c, id).read();
  if (!s || s.organizationId !== twinId) throw notFound("Simulation");
  return s;
}

app.openapi(
  createRoute({
    method: "post",
    path: "/test/simulations",
    tags,
    summary: "Start a simulated day of arrivals, calls, services and no-shows on a queue of the twin (a test key)",
    description:
      "The virtual clock starts now and runs `speed` times faster than the real one. Everything goes through the queue's room as real " +
      "traffic does (walk-ins of the key, calls at `desks` desks, serves, completions, absences), with `at` = the virtual time, so events, " +
      "webhooks and analytics show it. Needs QUEUE_OPERATE.",
    security: SECURITY.apiKey,
    request: { body: { content: { "application/json": { schema: SimulationRequest } }, required: true } },
    responses: { 201: jsonResponse(okEnvelope(Simulation), "The simulation, running"), ...errors() },
  }),
  async (c) => {
    const twinId = twinOfKey(c);
    const body = c.req.valid("json");
    const actor = await authorize(c, twinId, "QUEUE_OPERATE");
    const queue = await findQueue(deps(c), body.queueId).catch(() => null);
    if (!queue || queue.organizationId !== twinId) throw notFound("Queue");
    const id = `sim_${randomString(20)}`;
    const seed = body.seed ?? crypto.getRandomValues(new Uint32Array(1))[0]! | 0;
    const spec = {
      queueId: queue.id,
      arrivalsPerHour: body.arrivalsPerHour,
      serviceMinutes: body.serviceMinutes,
      noShowRate: body.noShowRate,
      durationMinutes: body.durationMinutes,
      desks: body.desks ?? 1,
      speed: body.speed,
      seed,
    };
    const state = newSimulation(id, twinId, actor.userId ?? actor.apiKeyId!, spec, now());
    await simulationObject(c, id).start(state);
    return c.json(ok(simulationRecord(state)), 201);
  },
);

app.openapi(
  createRoute({
    method: "get",
    path: "/test/simulations/{id}",
    tags,
    summary: "A simulated day's progress and figures (a test key)",
    security: SECURITY.apiKey,
    request: { params: SimulationParams },
    responses: { 200: jsonResponse(okEnvelope(Simulation), "The simulation"), ...errors() },
  }),
  async (c) => {
    const twinId = twinOfKey(c);
    await authorize(c, twinId, "QUEUE_VIEW");
    const s = await ownSimulation(c, twinId, c.req.valid("param").id);
    return c.json(ok(simulationRecord(s)), 200);
  },
);

app.openapi(
  createRoute({
    method: "delete",
    path: "/test/simulations/{id}",
    tags,
    summary: "Stop a simulated day: once this answers, it makes no more events (a test key)",
    security: SECURITY.apiKey,
    request: { params: SimulationParams },
    responses: { 200: jsonResponse(okEnvelope(Simulation), "The simulation, stopped (or already over)"), ...errors() },
  }),
  async (c) => {
    const twinId = twinOfKey(c);
    await authorize(c, twinId, "QUEUE_OPERATE");
    const id = c.req.valid("param").id;
    await ownSimulation(c, twinId, id);
    const s = await simulationObject(c, id).stop();
    return c.json(ok(simulationRecord(s!)), 200);
  },
);

export default app;
