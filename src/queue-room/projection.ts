import { and, eq, exists, getTableColumns, or, sql, type Placeholder, type SQL } from "drizzle-orm";
import { alias, type AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Database } from "../db/client";
import { preparedWrite, withValues, type BoundWrite } from "../db/prepared";
import {
  analyticsHourly,
  analyticsTicketFacts,
  organizations,
  queues,
  remoteJoinExpiries,
  roomDeadlines,
  tickets,
  users,
} from "../db/schema";
import { codeOf } from "./rows";
import type { DomainEventMessage } from "../domain/events";
import {
  ANALYTICS_CHANNELS,
  FACT_COLUMNS,
  factTuple,
  CHANNEL_METRICS,
  channelColumn,
  ticketFacts,
  type ChannelMetric,
  type TicketForAnalytics,
} from "../domain/analytics";
import type { Configured, TicketRow } from "./rows";

// The room's projection to D1: the statements its outbox drain (outbox.ts) and its archive step
// (archive.ts) write, each set in one D1 batch (db/prepared.ts batchWrites). D1 is the history and
// what the Worker's reads see; the room writes it only through here.
//
// A drain carries up to a hundred tickets: their rows in one statement and their analytics in two
// (each a JSON parameter read with json_each), whatever their number. Every statement's shape is built by Drizzle once per
// isolate with placeholders (db/prepared.ts), and a drain only binds its values. A conditional insert selects its row from the row that guards it (the organization, the
// queue, the user), so the drain of a deleted organization's room writes nothing instead of
// failing its batch on a foreign key.

interface Owner {
  organization_id: string;
  queue_id: string;
}

/** A bound value selected as a column of the row an insert … select writes. */
const bound = <K extends string>(p: Record<K, Placeholder<K>>, name: K) => sql`${p[name]}`.as(name);

/** The row an upsert proposed (`excluded.<column>`), for its DO UPDATE SET. */
const excluded = (column: AnySQLiteColumn) => sql.raw(`excluded.${column.name}`);

/** The organization still exists (a conditional insert's guard). */
const organizationExists = (db: Database, id: Placeholder) =>
  exists(
    db
      .select({ one: sql`1` })
      .from(organizations)
      .where(eq(organizations.id, id)),
  );

// ---- the analytics aggregates ----------------------------------------------------------------

/** The delta's names of each channel metric (CHANNEL_METRICS) in the subquery `d` of the delta. */
const CHANNEL_DELTAS = { c: "dc", s: "ds", n: "dn", x: "dx", t: "dt", w: "dw", wm: "dwm" } as const satisfies Record<ChannelMetric, string>;

/** A column of analytics_hourly by its name (the schema declares the per-channel columns from CHANNEL_COLUMNS). */
function hourlyColumn(name: string): AnySQLiteColumn {
  const column = Object.values<AnySQLiteColumn>(getTableColumns(analyticsHourly)).find((c) => c.name === name);
  if (!column) throw new Error(`analytics_hourly has no column ${name}`);
  return column;
}

/** A fact of the drain's tickets, from its place in the fact tuple of the json_each row `j` (FACT_COLUMNS, factTuple). */
function newFact(name: (typeof FACT_COLUMNS)[number]): SQL {
  const i = FACT_COLUMNS.indexOf(name);
  return sql.raw(`json_extract(j.value, '$[${i}]')`);
}

/** A histogram's bucket moves of the hour row `h`: -1 for each old bucket `from`, +1 for each new `to` (the CTE `t`). */
function bucketMoves(from: string, to: string): SQL {
  return sql.raw(
    `SELECT hour_start AS hs, ${from} AS b, -1 AS k FROM t WHERE ${from} IS NOT NULL UNION ALL SELECT hour_start, ${to}, 1 FROM t WHERE ${to} IS NOT NULL`,
  );
}

/**
 * A histogram column after the drain's moves in its hour: each bucket moved takes its count plus
 * the moves' sum (json_patch of the buckets named; an hour without moves is left as it is).
 */
function movedCounts(column: AnySQLiteColumn, from: string, to: string): SQL {
  const key = sql.raw(`'$."' || m.b || '"'`);
  return sql`json_patch(${column}, (SELECT json_group_object(m.b, coalesce(json_extract(${column}, ${key}), 0) + m.k)
    FROM (SELECT b, SUM(k) AS k FROM (${bucketMoves(from, to)}) WHERE hs = ${analyticsHourly.hourStart} GROUP BY b) AS m))`;
}

/**
 * The drain's tickets' facts replace what each counted for in its hour's row, only for a ticket
 * whose stored facts are absent or older than its version (the CTE `t` holds one row of deltas
 * per such ticket; the others move nothing). One statement for the whole drain, its facts one
 * JSON parameter (issue 43: one statement a ticket, each 5 kB of SQL, was most of what a drain sent
 * to D1). The sums are grouped by hour; a histogram's buckets move by their net count.
 */
const applyDeltas = preparedWrite(["queueId", "facts"], (db, p) => {
  const h = analyticsHourly;
  const n = sql`(SELECT ${newFact("ticket_id")} AS ticket_id, CAST(${newFact("hour_start")} AS INTEGER) AS hour_start,
      ${newFact("channel")} AS channel, CAST(${newFact("served")} AS INTEGER) AS served, CAST(${newFact("no_show")} AS INTEGER) AS no_show,
      CAST(${newFact("cancelled")} AS INTEGER) AS cancelled, CAST(${newFact("transferred")} AS INTEGER) AS transferred,
      CAST(${newFact("wait_ms")} AS INTEGER) AS wait_ms, CAST(${newFact("wait_bucket")} AS INTEGER) AS wait_bucket,
      CAST(${newFact("service_ms")} AS INTEGER) AS service_ms, CAST(${newFact("service_bucket")} AS INTEGER) AS service_bucket,
      CAST(${newFact("estimate_error_ms")} AS INTEGER) AS estimate_error_ms,
      CAST(${newFact("estimate_error_bucket")} AS INTEGER) AS estimate_error_bucket,
      CAST(${newFact("estimate_bias_ms")} AS INTEGER) AS estimate_bias_ms, CAST(${newFact("version")} AS INTEGER) AS version
    FROM json_each(${p.facts}) AS j) AS n`;
  const o = alias(analyticsTicketFacts, "o");
  const t = db.$with("t").as(
    db
      .select({
        hourStart: sql`n.hour_start`.as("hour_start"),
        channel: sql`n.channel`.as("channel"),
        dc: sql`(${o.ticketId} IS NULL)`.as("dc"),
        ds: sql`n.served - coalesce(${o.served}, 0)`.as("ds"),
        dn: sql`n.no_show - coalesce(${o.noShow}, 0)`.as("dn"),
        dx: sql`n.cancelled - coalesce(${o.cancelled}, 0)`.as("dx"),
        dt: sql`n.transferred - coalesce(${o.transferred}, 0)`.as("dt"),
        dw: sql`(n.wait_ms IS NOT NULL) - (${o.waitMs} IS NOT NULL)`.as("dw"),
        dwm: sql`coalesce(n.wait_ms, 0) - coalesce(${o.waitMs}, 0)`.as("dwm"),
        owb: sql`${o.waitBucket}`.as("owb"),
        nwb: sql`n.wait_bucket`.as("nwb"),
        dsv: sql`(n.service_ms IS NOT NULL) - (${o.serviceMs} IS NOT NULL)`.as("dsv"),
        dsm: sql`coalesce(n.service_ms, 0) - coalesce(${o.serviceMs}, 0)`.as("dsm"),
        osb: sql`${o.serviceBucket}`.as("osb"),
        nsb: sql`n.service_bucket`.as("nsb"),
        de: sql`(n.estimate_error_ms IS NOT NULL) - (${o.estimateErrorMs} IS NOT NULL)`.as("de"),
        dem: sql`coalesce(n.estimate_error_ms, 0) - coalesce(${o.estimateErrorMs}, 0)`.as("dem"),
        deb: sql`coalesce(n.estimate_bias_ms, 0) - coalesce(${o.estimateBiasMs}, 0)`.as("deb"),
        oeb: sql`${o.estimateErrorBucket}`.as("oeb"),
        neb: sql`n.estimate_error_bucket`.as("neb"),
      })
      .from(n)
      .leftJoin(o, sql`${o.ticketId} = n.ticket_id`)
      .where(or(sql`${o.ticketId} IS NULL`, sql`${o.version} < n.version`)),
  );
  // Each channel column moves by its metric's delta summed over the hour's tickets of that channel.
  const channelSums = Object.fromEntries(
    ANALYTICS_CHANNELS.flatMap((channel) =>
      CHANNEL_METRICS.map((metric) => {
        const name = channelColumn(channel, metric);
        return [name, sql.raw(`SUM((t.channel = '${channel}') * t.${CHANNEL_DELTAS[metric]})`).as(name)];
      }),
    ),
  );
  const d = db
    .select({
      hourStart: sql`t.hour_start`.as("hour_start"),
      ...Object.fromEntries(
        (["dc", "ds", "dn", "dx", "dt", "dw", "dwm", "dsv", "dsm", "de", "dem", "deb"] as const).map((k) => [
          k,
          sql.raw(`SUM(t.${k})`).as(k),
        ]),
      ),
      ...channelSums,
    })
    .from(t)
    .groupBy(sql`t.hour_start`)
    .as("d");
  // A field of `d` named with its table (Drizzle would write the alias alone).
  const of = (name: string) => sql`${sql.identifier("d")}.${sql.identifier(name)}`;
  const channels = Object.fromEntries(
    ANALYTICS_CHANNELS.flatMap((channel) =>
      CHANNEL_METRICS.map((metric) => {
        const column = hourlyColumn(channelColumn(channel, metric));
        return [column.name, sql`${column} + ${of(column.name)}`];
      }),
    ),
  );
  return db
    .with(t)
    .update(h)
    .set({
      created: sql`${h.created} + ${of("dc")}`,
      served: sql`${h.served} + ${of("ds")}`,
      noShow: sql`${h.noShow} + ${of("dn")}`,
      cancelled: sql`${h.cancelled} + ${of("dx")}`,
      transferred: sql`${h.transferred} + ${of("dt")}`,
      waited: sql`${h.waited} + ${of("dw")}`,
      waitMs: sql`${h.waitMs} + ${of("dwm")}`,
      waitHist: movedCounts(h.waitHist, "owb", "nwb"),
      serviced: sql`${h.serviced} + ${of("dsv")}`,
      serviceMs: sql`${h.serviceMs} + ${of("dsm")}`,
      serviceHist: movedCounts(h.serviceHist, "osb", "nsb"),
      estimated: sql`${h.estimated} + ${of("de")}`,
      estimateErrorMs: sql`${h.estimateErrorMs} + ${of("dem")}`,
      estimateBiasMs: sql`${h.estimateBiasMs} + ${of("deb")}`,
      estimateErrorHist: movedCounts(h.estimateErrorHist, "oeb", "neb"),
      ...channels,
    })
    .from(d)
    .where(and(eq(h.queueId, p.queueId), sql`${h.hourStart} = ${of("hour_start")}`))
    .prepare();
});

/** A fact column read from its place in a ticket's fact tuple (FACT_COLUMNS, factTuple). */
function factAt(column: AnySQLiteColumn): SQL.Aliased {
  const i = FACT_COLUMNS.findIndex((name) => name === column.name);
  if (i < 0) throw new Error(`analytics_ticket_facts.${column.name} is not a fact column`);
  return sql.raw(`json_extract(j.value, '$[${i}]')`).as(column.name);
}

/** The tickets' facts, as counted by the deltas: replaced only by a newer version. */
const upsertFacts = preparedWrite(["queueId", "organizationId", "facts"], (db, p) => {
  const f = analyticsTicketFacts;
  return db
    .insert(f)
    .select(
      db
        .select({
          ticketId: factAt(f.ticketId),
          queueId: bound(p, "queueId"),
          organizationId: bound(p, "organizationId"),
          hourStart: factAt(f.hourStart),
          channel: factAt(f.channel),
          served: factAt(f.served),
          noShow: factAt(f.noShow),
          cancelled: factAt(f.cancelled),
          transferred: factAt(f.transferred),
          waitMs: factAt(f.waitMs),
          waitBucket: factAt(f.waitBucket),
          serviceMs: factAt(f.serviceMs),
          serviceBucket: factAt(f.serviceBucket),
          estimateErrorMs: factAt(f.estimateErrorMs),
          estimateErrorBucket: factAt(f.estimateErrorBucket),
          estimateBiasMs: factAt(f.estimateBiasMs),
          version: factAt(f.version),
        })
        .from(sql`json_each(${p.facts}) AS j`)
        .where(organizationExists(db, p.organizationId)),
    )
    .onConflictDoUpdate({
      target: f.ticketId,
      // Every fact a ticket's counting depends on: its hour, its channel and its figures.
      set: Object.fromEntries(
        Object.entries<AnySQLiteColumn>(getTableColumns(f))
          .filter(([, c]) => c !== f.ticketId && FACT_COLUMNS.some((name) => name === c.name))
          .map(([key, c]) => [key, excluded(c)]),
      ),
      setWhere: sql`excluded.version > ${f.version}`,
    })
    .prepare();
});

/** A column's default as a literal (the hour row's figures start at their defaults). */
function defaultOf(column: AnySQLiteColumn): SQL.Aliased {
  const value: unknown = column.default;
  if (typeof value === "number") return sql.raw(String(value)).as(column.name);
  if (typeof value === "string") return sql.raw(`'${value.replaceAll("'", "''")}'`).as(column.name);
  throw new Error(`analytics_hourly.${column.name} has no literal default`);
}

/** The hour rows the deltas update, created when absent. */
const ensureHours = preparedWrite(["queueId", "organizationId", "hours"], (db, p) => {
  const h = analyticsHourly;
  // Drizzle's insert … select names every column of the table: the figures take their defaults.
  const figures = Object.entries<AnySQLiteColumn>(getTableColumns(h)).filter(
    ([, c]) => c !== h.queueId && c !== h.hourStart && c !== h.organizationId,
  );
  return db
    .insert(h)
    .select(
      db
        .select({
          queueId: bound(p, "queueId"),
          hourStart: sql`j.value`.as("hour_start"),
          organizationId: bound(p, "organizationId"),
          ...Object.fromEntries(figures.map(([key, c]) => [key, defaultOf(c)])),
        })
        .from(sql`json_each(${p.hours}) AS j`)
        .where(organizationExists(db, p.organizationId)),
    )
    .onConflictDoNothing({ target: [h.queueId, h.hourStart] })
    .prepare();
});

/**
 * The statements that bring the aggregates up to date with these tickets (the room's current
 * rows), for the drain's batch. Safe to run any number of times: a ticket's figures move only
 * from the facts last counted to a newer version's.
 */
export function analyticsDrainStatements(owner: Owner, tickets: readonly TicketForAnalytics[]): BoundWrite[] {
  if (tickets.length === 0) return [];
  const facts = tickets.map(ticketFacts);
  const hours = [...new Set(facts.map((f) => f.hourStart))];
  const owned = { queueId: owner.queue_id, organizationId: owner.organization_id };
  return [
    withValues(ensureHours, { ...owned, hours: JSON.stringify(hours) }),
    withValues(applyDeltas, { queueId: owner.queue_id, facts: JSON.stringify(facts.map(factTuple)) }),
    withValues(upsertFacts, { ...owned, facts: JSON.stringify(facts.map(factTuple)) }),
  ];
}

// ---- the ticket projection -------------------------------------------------------------------

/** The values of a ticket's projection: one per column (Drizzle checks the selected row against the table when it builds the insert). */
const TICKET_COLUMNS = [
  "id",
  "queueId",
  "serviceId",
  "organizationId",
  "userId",
  "number",
  "displayCode",
  "status",
  "partySize",
  "isPriority",
  "isGhostMode",
  "source",
  "visitorName",
  "assignedToId",
  "calledAt",
  "servingAt",
  "servedAt",
  "presentAt",
  "skipReason",
  "recoveredFromId",
  "transferredToId",
  "createdAt",
  "updatedAt",
  "version",
  "firstEstimateMinutes",
  "outcome",
  "note",
  "heldAt",
  "steppedBackPlaces",
  "deferredUntil",
  "deferCount",
  "counter",
  "deskId",
  "recallCount",
  "recalledAt",
  "phone",
  "intake",
  "intakePersonal",
  "labels",
  "kind",
  "appointmentAt",
  "visitId",
  "legIndex",
  "legCount",
] as const satisfies readonly (keyof typeof tickets.$inferSelect)[];

/** The value of `column` in a ticket's tuple (TICKET_COLUMNS' order), read from the row `j` of json_each. */
function ticketAt(column: (typeof TICKET_COLUMNS)[number]): SQL.Aliased {
  return sql.raw(`json_extract(j.value, '$[${TICKET_COLUMNS.indexOf(column)}]')`).as(column);
}

/**
 * The tickets as the room holds them, inserted or, when D1 holds an older version, updated: the
 * fields a ticket keeps from its creation (number, code, owner, source, …) are not rewritten.
 * One statement for a drain's tickets, their values one JSON parameter read with json_each
 * (issue 43: one statement a ticket sent its text and bound its 44 values a hundred times).
 */
const upsertTickets = preparedWrite(["organizationId", "tickets"], (db, p) => {
  const t = tickets;
  return db
    .insert(t)
    .select(
      db
        .select({
          id: ticketAt("id"),
          queueId: ticketAt("queueId"),
          serviceId: ticketAt("serviceId"),
          organizationId: ticketAt("organizationId"),
          userId: ticketAt("userId"),
          number: ticketAt("number"),
          displayCode: ticketAt("displayCode"),
          status: ticketAt("status"),
          partySize: ticketAt("partySize"),
          isPriority: ticketAt("isPriority"),
          isGhostMode: ticketAt("isGhostMode"),
          source: ticketAt("source"),
          visitorName: ticketAt("visitorName"),
          assignedToId: ticketAt("assignedToId"),
          calledAt: ticketAt("calledAt"),
          servingAt: ticketAt("servingAt"),
          servedAt: ticketAt("servedAt"),
          presentAt: ticketAt("presentAt"),
          skipReason: ticketAt("skipReason"),
          recoveredFromId: ticketAt("recoveredFromId"),
          transferredToId: ticketAt("transferredToId"),
          createdAt: ticketAt("createdAt"),
          updatedAt: ticketAt("updatedAt"),
          version: ticketAt("version"),
          firstEstimateMinutes: ticketAt("firstEstimateMinutes"),
          outcome: ticketAt("outcome"),
          note: ticketAt("note"),
          heldAt: ticketAt("heldAt"),
          steppedBackPlaces: ticketAt("steppedBackPlaces"),
          deferredUntil: ticketAt("deferredUntil"),
          deferCount: ticketAt("deferCount"),
          counter: ticketAt("counter"),
          deskId: ticketAt("deskId"),
          recallCount: ticketAt("recallCount"),
          recalledAt: ticketAt("recalledAt"),
          phone: ticketAt("phone"),
          intake: ticketAt("intake"),
          intakePersonal: ticketAt("intakePersonal"),
          labels: ticketAt("labels"),
          kind: ticketAt("kind"),
          appointmentAt: ticketAt("appointmentAt"),
          visitId: ticketAt("visitId"),
          legIndex: ticketAt("legIndex"),
          legCount: ticketAt("legCount"),
        })
        .from(sql`json_each(${p.tickets}) AS j`)
        .where(organizationExists(db, p.organizationId)),
    )
    .onConflictDoUpdate({
      target: t.id,
      set: {
        status: excluded(t.status),
        assignedToId: excluded(t.assignedToId),
        calledAt: excluded(t.calledAt),
        servingAt: excluded(t.servingAt),
        servedAt: excluded(t.servedAt),
        presentAt: excluded(t.presentAt),
        skipReason: excluded(t.skipReason),
        transferredToId: excluded(t.transferredToId),
        isPriority: excluded(t.isPriority),
        updatedAt: excluded(t.updatedAt),
        version: excluded(t.version),
        firstEstimateMinutes: sql`coalesce(${t.firstEstimateMinutes}, excluded.first_estimate_minutes)`,
        outcome: excluded(t.outcome),
        note: excluded(t.note),
        heldAt: excluded(t.heldAt),
        steppedBackPlaces: excluded(t.steppedBackPlaces),
        counter: excluded(t.counter),
        deskId: excluded(t.deskId),
        recallCount: excluded(t.recallCount),
        recalledAt: excluded(t.recalledAt),
        intake: excluded(t.intake),
        intakePersonal: excluded(t.intakePersonal),
        labels: excluded(t.labels),
        deferredUntil: excluded(t.deferredUntil),
        deferCount: excluded(t.deferCount),
      },
      setWhere: sql`excluded.version > ${t.version}`,
    })
    .prepare();
});

/** The number as providers write it (joins accept spaces, dots and brackets): an inbound SMS finds it (issue 30). */
function barePhoneOf(t: TicketRow): string | null {
  return t.phone === null ? null : t.phone.replace(/[\s().-]/g, "");
}

/** How many legs the ticket's visit has (its route, JSON); null for a one-service visit. */
function legCountOf(t: TicketRow): number | null {
  if (!t.route) return null;
  const legs: unknown = JSON.parse(t.route);
  return Array.isArray(legs) ? legs.length : null;
}

/**
 * The D1 projection of these tickets (at least one) as the room holds them. Guarded by `version`:
 * applied again with an older row (an at-least-once replay) it changes nothing.
 */
export function ticketsUpsert(cfg: Configured, rows: readonly TicketRow[]): BoundWrite {
  const tuples = rows.map((t) => {
    const values = ticketValues(cfg, t);
    return TICKET_COLUMNS.map((column) => values[column]);
  });
  return withValues(upsertTickets, { organizationId: cfg.organization_id, tickets: JSON.stringify(tuples) });
}

function ticketValues(cfg: Configured, t: TicketRow): Record<(typeof TICKET_COLUMNS)[number], string | number | null> {
  return {
    id: t.id,
    queueId: cfg.queue_id,
    serviceId: cfg.service_id,
    organizationId: cfg.organization_id,
    userId: t.user_id,
    number: t.number,
    displayCode: codeOf(cfg.letter, t),
    status: t.status,
    partySize: t.party_size,
    isPriority: t.is_priority,
    isGhostMode: t.is_ghost_mode,
    source: t.source,
    visitorName: t.visitor_name,
    assignedToId: t.assigned_to_id,
    calledAt: t.called_at,
    servingAt: t.serving_at,
    servedAt: t.served_at,
    presentAt: t.present_at,
    skipReason: t.skip_reason,
    recoveredFromId: t.recovered_from_id,
    transferredToId: t.transferred_to_id,
    createdAt: t.created_at,
    updatedAt: t.updated_at,
    version: t.version,
    firstEstimateMinutes: t.first_estimate_minutes ?? null,
    outcome: t.outcome ?? null,
    note: t.note ?? null,
    heldAt: t.held_at ?? null,
    steppedBackPlaces: t.stepped_back_places ?? null,
    deferredUntil: t.deferred_until ?? null,
    deferCount: t.defer_count ?? 0,
    counter: t.counter,
    deskId: t.desk_id,
    recallCount: t.recall_count,
    recalledAt: t.recalled_at,
    phone: barePhoneOf(t),
    intake: t.intake ?? null,
    intakePersonal: t.intake_personal ?? null,
    labels: t.labels ?? null,
    kind: t.kind ?? "walk_in",
    appointmentAt: t.appointment_at ?? null,
    visitId: t.visit_id ?? null,
    legIndex: t.leg_index ?? null,
    legCount: legCountOf(t),
  };
}

// ---- the queue, its deadline, remote-join expiries -------------------------------------------

/** The queue's status and archive time as the room holds them, written only when they differ. */
const queueStatus = preparedWrite(["queueId", "status", "archivedAt"], (db, p) =>
  db
    .update(queues)
    .set({ status: sql`${p.status}`, archivedAt: sql`${p.archivedAt}` })
    .where(and(eq(queues.id, p.queueId), or(sql`${queues.status} IS NOT ${p.status}`, sql`${queues.archivedAt} IS NOT ${p.archivedAt}`)))
    .prepare(),
);

/** The room's next deadline for the cron sweep, while its queue exists. */
const upsertDeadline = preparedWrite(["queueId", "organizationId", "dueAt"], (db, p) =>
  db
    .insert(roomDeadlines)
    .select(
      db
        .select({ queueId: bound(p, "queueId"), organizationId: bound(p, "organizationId"), dueAt: bound(p, "dueAt") })
        .from(queues)
        .where(eq(queues.id, p.queueId)),
    )
    .onConflictDoUpdate({ target: roomDeadlines.queueId, set: { dueAt: excluded(roomDeadlines.dueAt) } })
    .prepare(),
);

/** No deadline left (or the room retired): the sweep has nothing to wake it for. */
const deleteDeadline = preparedWrite(["queueId"], (db, p) =>
  db.delete(roomDeadlines).where(eq(roomDeadlines.queueId, p.queueId)).prepare(),
);

/** An expired remote join, while its user and organization exist; a replay inserts nothing. */
const insertExpiry = preparedWrite(["ticketId", "userId", "organizationId", "queueId", "expiredAt"], (db, p) =>
  db
    .insert(remoteJoinExpiries)
    .select(
      db
        .select({
          ticketId: bound(p, "ticketId"),
          userId: bound(p, "userId"),
          organizationId: bound(p, "organizationId"),
          queueId: bound(p, "queueId"),
          expiredAt: bound(p, "expiredAt"),
        })
        .from(users)
        .where(and(eq(users.id, p.userId), organizationExists(db, p.organizationId))),
    )
    .onConflictDoNothing({ target: remoteJoinExpiries.ticketId })
    .prepare(),
);

/**
 * D1 statements that record the remote joins expired in this outbox batch, so the penalty
 * (counted per user across every queue) is read without asking each room. Replays insert nothing new.
 */
export function remoteExpiryProjection(messages: readonly DomainEventMessage[]): BoundWrite[] {
  return messages.flatMap((m) =>
    m.type === "remote_join.expired" && m.ticketId !== null && m.queueId !== null
      ? [
          withValues(insertExpiry, {
            ticketId: m.ticketId,
            userId: typeof m.data.userId === "string" ? m.data.userId : null,
            organizationId: m.organizationId,
            queueId: m.queueId,
            expiredAt: Date.parse(m.occurredAt),
          }),
        ]
      : [],
  );
}

/**
 * One drain's D1 batch (outbox.ts): the tickets as the room holds them, the analytics
 * aggregates (once per ticket version), the queue's status, the room's next deadline for the
 * cron sweep, and the remote joins that expired.
 */
export function drainStatements(
  cfg: Configured,
  tickets: readonly TicketRow[],
  deadline: number | null,
  messages: readonly DomainEventMessage[],
): BoundWrite[] {
  return [
    ...(tickets.length > 0 ? [ticketsUpsert(cfg, tickets)] : []),
    // The analytics aggregates move in the same transaction, once per ticket version.
    ...analyticsDrainStatements(cfg, tickets),
    withValues(queueStatus, { queueId: cfg.queue_id, status: cfg.status, archivedAt: cfg.archived_at }),
    deadline === null || cfg.retired_at !== null
      ? withValues(deleteDeadline, { queueId: cfg.queue_id })
      : withValues(upsertDeadline, { queueId: cfg.queue_id, organizationId: cfg.organization_id, dueAt: deadline }),
    ...remoteExpiryProjection(messages),
  ];
}
