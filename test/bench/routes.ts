import { Hono, type Context } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../src/http/context";
import { authenticate, requireCredential } from "../../src/http/auth";
import { validationError } from "../../src/http/errors";
import { ok } from "../../src/http/respond";
import { validationHook } from "../../src/http/validation";
import { now } from "../../src/lib/clock";
import type { NewTicket } from "../../src/queue-room/types";
import { rebuildAnalytics } from "../../src/analytics/analytics-aggregates";
import { findQueue } from "../../src/tickets/queues";
import { readRoom } from "../../src/tickets/queue-rooms";
import { issueTicket } from "../../src/tickets/tickets";
import type { BenchEnv } from "./worker";
import { deps } from "../../src/http/deps";

// Routes for `npm run bench` only (test/bench/run.mjs), served by the bench's own entry
// (test/bench/worker.ts), never by the Worker that deploys: the two baselines the real routes
// are compared with, and bulk seeding that would take minutes through the API.

type BenchContext = Context<{ Bindings: BenchEnv; Variables: AppEnv["Variables"] }>;

/** Tickets asked of a room at once while seeding: enough to keep it busy, few enough to stay polite. */
const SEED_IN_FLIGHT = 50;
/** Rows per INSERT … SELECT: each statement binds nine parameters, far below D1's 100. */
const LOCATION_ROWS_PER_STATEMENT = 5_000;
const KM_PER_DEGREE = 111.195;

const BenchPlan = z.strictObject({ plan: z.enum(["enterprise", "pro"]) });

const SeedTickets = z.strictObject({
  count: z.number().int().min(1).max(20_000),
  userId: z.string().min(1).max(64),
});

const SeedHistory = z.strictObject({
  queueId: z.string().min(1).max(64),
  /** First ticket index of this request (requests of a history follow one another). */
  from: z.number().int().min(0),
  count: z.number().int().min(1).max(50_000),
  perDay: z.number().int().min(1).max(5_000),
  /** 00:00 UTC of the history's first day. */
  start: z.number().int().min(0),
});
/** Rows per INSERT … SELECT of a history (a recursive CTE: no bound parameter per row). */
const HISTORY_ROWS_PER_STATEMENT = 10_000;

const SeedLocations = z.strictObject({
  organizationId: z.string().min(1).max(64),
  count: z.number().int().min(1).max(200_000),
  latitude: z.number().min(-80).max(80),
  longitude: z.number().min(-170).max(170),
  spreadKm: z.number().gt(0).max(500),
});

async function body<T extends z.ZodType>(c: BenchContext, schema: T): Promise<z.infer<T>> {
  const raw: unknown = await c.req.json().catch(() => {
    throw validationError("body", "malformed JSON");
  });
  const result = schema.safeParse(raw);
  validationHook(
    result.success ? { success: true } : { success: false, error: result.error, target: "json" },
    c as unknown as Context<AppEnv>,
  );
  return result.data as z.infer<T>;
}

export function benchRoutes() {
  const app = new Hono<{ Bindings: BenchEnv; Variables: AppEnv["Variables"] }>().basePath("/__bench");

  /** Baseline A: the Worker answering with no middleware, storage or room behind it. */
  app.get("/empty", (c) => c.json(ok(null)));

  /** Baseline B: one RPC into a Durable Object (one per queue id, like rooms) that does nothing. */
  app.get("/queues/:queueId/ping", async (c) =>
    c.json(ok(await c.env.EMPTY_ROOM.get(c.env.EMPTY_ROOM.idFromName(c.req.param("queueId"))).ping())),
  );

  /**
   * The credential lookup alone (issue 43): the production `authenticate` middleware on a path
   * naming a queue, then an empty answer. Its cost is this minus baseline A. A session token that
   * carries its user is judged by the user's object (one call once warm, beside the queue row's
   * read: docs/hot-path.md "The caller's object"); one of the previous format by one D1 batch.
   */
  app.get("/queues/:queueId/credential", authenticate as never, (c) => {
    requireCredential(c as unknown as Context<AppEnv>);
    return c.json(ok(null));
  });

  /**
   * The organization's plan: Enterprise has no ticket quota; Pro (50,000 a month) makes its
   * joins take a unit from the organization's ledger, as every plan with a quota does.
   */
  app.post("/organizations/:organizationId/plan", async (c) => {
    const { plan } = await body(c, BenchPlan);
    const result = await c.env.DB.prepare("UPDATE subscriptions SET plan = ? WHERE organization_id = ?")
      .bind(plan, c.req.param("organizationId"))
      .run();
    if (result.meta.changes === 0) throw validationError("organizationId", "no subscription for this organization");
    return c.json(ok({ plan }));
  });

  /** `count` waiting tickets through the join service (rules and quota), as the real route adds them. */
  app.post("/queues/:queueId/tickets", async (c) => {
    const { count, userId } = await body(c, SeedTickets);
    const queue = await findQueue(deps(c), c.req.param("queueId"));
    const ticket: NewTicket = {
      userId,
      partySize: 1,
      isPriority: false,
      isGhostMode: true,
      visitorName: null,
      phone: null,
      language: null,
      source: "operator",
    };
    for (let done = 0; done < count; done += SEED_IN_FLIGHT) {
      const batch = Math.min(SEED_IN_FLIGHT, count - done);
      await Promise.all(Array.from({ length: batch }, () => issueTicket(deps(c), queue, ticket, now())));
    }
    const summary = await readRoom(deps(c), queue, (room) => room.query({ question: "summary", at: now() }));
    return c.json(ok({ seeded: count, waitingCount: summary.waitingCount }));
  });

  /** How many of the queue's tickets the outbox has projected to D1: the bench waits for it to settle. */
  app.get("/queues/:queueId/projected", async (c) => {
    const row = await c.env.DB.prepare("SELECT COUNT(*) AS n FROM tickets WHERE queue_id = ?")
      .bind(c.req.param("queueId"))
      .first<{ n: number }>();
    return c.json(ok({ tickets: row?.n ?? 0 }));
  });

  /**
   * `count` locations spread evenly over a square of ±spreadKm around the point (an R2
   * low-discrepancy sequence, so every run gets the same layout), generated by SQLite itself.
   */
  app.post("/locations", async (c) => {
    const input = await body(c, SeedLocations);
    const org = await c.env.DB.prepare("SELECT id FROM organizations WHERE id = ?").bind(input.organizationId).first();
    if (!org) throw validationError("organizationId", "no such organization");
    const latSpan = (2 * input.spreadKm) / KM_PER_DEGREE;
    const lonSpan = latSpan / Math.cos((input.latitude * Math.PI) / 180);
    const minLat = input.latitude - latSpan / 2;
    const minLon = input.longitude - lonSpan / 2;
    const at = now();
    const base = (await c.env.DB.prepare("SELECT COUNT(*) AS n FROM locations").first<{ n: number }>())?.n ?? 0;
    const statements: D1PreparedStatement[] = [];
    for (let from = 0; from < input.count; from += LOCATION_ROWS_PER_STATEMENT) {
      const to = Math.min(input.count, from + LOCATION_ROWS_PER_STATEMENT);
      statements.push(
        c.env.DB.prepare(
          `WITH RECURSIVE seq(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?2)
           INSERT INTO locations (id, organization_id, name, address, latitude, longitude, timezone, created_at, updated_at)
           SELECT printf('loc_bench%015d', ?7 + i), ?3, 'Bench location ' || i, 'Bench street',
             ?4 + ?6 * ((i * 0.7548776662) - CAST(i * 0.7548776662 AS INTEGER)),
             ?5 + ?8 * ((i * 0.5698402910) - CAST(i * 0.5698402910 AS INTEGER)),
             'UTC', ?9, ?9
           FROM seq`,
        ).bind(from, to, input.organizationId, minLat, minLon, latSpan, base, lonSpan, at),
      );
    }
    await c.env.DB.batch(statements);
    return c.json(ok({ inserted: input.count }));
  });

  /**
   * A served history, written straight into the ticket projection: `perDay` tickets a day from
   * 08:00 to 20:00 UTC, ticket i on day floor(i / perDay); outcomes, channels, operators, waits
   * and service times spread by i (70% served, 10% no-show, 10% skipped, 10% cancelled).
   */
  app.post("/analytics/history", async (c) => {
    const input = await body(c, SeedHistory);
    const queue = await findQueue(deps(c), input.queueId);
    const statements: D1PreparedStatement[] = [];
    for (let from = input.from; from < input.from + input.count; from += HISTORY_ROWS_PER_STATEMENT) {
      const to = Math.min(input.from + input.count, from + HISTORY_ROWS_PER_STATEMENT);
      statements.push(
        c.env.DB.prepare(
          `WITH RECURSIVE seq(i) AS (SELECT CAST(?1 AS INTEGER) UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?2),
             p(per, start) AS (SELECT CAST(?5 AS INTEGER), CAST(?6 AS INTEGER)),
             t(i, created) AS (SELECT i, start + (i / per) * 86400000 + 28800000 + ((i % per) * 43200000) / per FROM seq, p)
           INSERT INTO tickets (id, queue_id, service_id, organization_id, user_id, number, display_code, status, party_size,
             is_priority, is_ghost_mode, source, assigned_to_id, called_at, serving_at, served_at, first_estimate_minutes,
             created_at, updated_at, version)
           SELECT printf('tkt_bench%s%012d', substr(?3, 5, 8), i), ?3, ?4, ?7, 'usr_bench_visitor', i + 1, 'A-' || (i % 1000),
             CASE i % 10 WHEN 7 THEN 'expired' WHEN 8 THEN 'skipped' WHEN 9 THEN 'cancelled' ELSE 'served' END, 1, 0, 1,
             CASE i % 7 WHEN 0 THEN 'app' WHEN 1 THEN 'widget' WHEN 2 THEN 'qr' WHEN 3 THEN 'nfc' WHEN 4 THEN 'remote' WHEN 5 THEN 'operator' ELSE 'vip' END,
             CASE WHEN i % 10 = 9 THEN NULL ELSE 'usr_bench_op' || (i % 5) END,
             CASE WHEN i % 10 = 9 THEN NULL ELSE created + (i * 7919) % 3600000 END,
             CASE WHEN i % 10 < 7 THEN created + (i * 7919) % 3600000 + 30000 END,
             CASE WHEN i % 10 < 7 THEN created + (i * 7919) % 3600000 + 90000 + (i * 104729) % 1200000 END,
             (i * 31) % 45, created, created, 1
           FROM t`,
        ).bind(from, to, queue.id, queue.serviceId, input.perDay, input.start, queue.organizationId),
      );
    }
    await c.env.DB.batch(statements);
    return c.json(ok({ inserted: input.count }));
  });

  /** The queue's aggregates rebuilt from the projection (what a migration of existing data runs). */
  app.post("/analytics/rebuild/:queueId", async (c) => {
    const queue = await findQueue(deps(c), c.req.param("queueId"));
    return c.json(ok(await rebuildAnalytics(deps(c), queue.organizationId, [queue.id])));
  });

  return app;
}
