import { channelOf } from "../domain/analytics";
import { csvRecord, isoInZone, UTF8_BOM, type CsvValue } from "../domain/csv";
import { and, eq, gt, gte, lt, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { desks, locations, queues, serviceLocations, services, tickets } from "../db/schema";
import { inIds, type AnalyticsScope, type ZoneScope } from "./analytics-scope";
import type { Deps } from "../http/deps";

// The tickets CSV export (docs/retention.md, "CSV export"): one row per ticket created in the
// range, streamed page by page. Each page is one keyset-paginated D1 read (created_at, id) on
// the (organization_id, created_at) index; the stream pulls the next page only when the
// client has taken the previous one, so memory holds one page, whatever the range.

/** Rows per D1 read. A year of a busy organization is a few hundred reads. */
export const EXPORT_PAGE = 2000;

export const EXPORT_COLUMNS = [
  "ticketId",
  "displayCode",
  "queueId",
  "queueName",
  "serviceId",
  "serviceName",
  "locationId",
  "locationName",
  "createdAt",
  "calledAt",
  "servedAt",
  "waitMinutes",
  "serviceMinutes",
  "channel",
  "status",
  "outcome",
  "operatorId",
  "desk",
  "ghost",
  "visitorName",
  // The operator's outcome at completion, one of the service's codes (docs/desks.md); appended last.
  "serviceOutcome",
  // The desk of the latest call (its id: `desk` is its name, which a manager may change) and the
  // counter label the call announced.
  "deskId",
  "counter",
  // The intake answers (docs/visits.md), open and personal, as one JSON object ("" when none):
  // the export is staff's own record, like visitorName; retention erases the personal ones.
  "intake",
  // Staff's labels (docs/visits.md), separated by spaces ("" when none).
  "labels",
  // docs/blend.md: walk_in or appointment; the appointment's start; its check-in in minutes from
  // the start (negative: before the slot, positive: after it), the punctuality ("" for a walk-in).
  "kind",
  "appointmentAt",
  "checkInMinutes",
] as const;

interface QueueFacts {
  name: string;
  serviceId: string;
  serviceName: string;
  locationId: string | null;
  locationName: string | null;
  timeZone: string;
}

/** One keyset page: tickets of the zone's queues created in its [from, to), after the cursor, on tickets_org_created_idx. */
export function exportPageQuery({ db }: Deps, organizationId: string, zone: ZoneScope, after: { at: number; id: string }) {
  const t = tickets;
  return db
    .select({
      id: t.id,
      queue_id: t.queueId,
      display_code: t.displayCode,
      status: t.status,
      source: t.source,
      visitor_name: t.visitorName,
      assigned_to_id: t.assignedToId,
      is_ghost_mode: t.isGhostMode,
      created_at: t.createdAt,
      called_at: t.calledAt,
      serving_at: t.servingAt,
      served_at: t.servedAt,
      transferred_to_id: t.transferredToId,
      outcome: t.outcome,
      desk_id: t.deskId,
      counter: t.counter,
      intake: t.intake,
      intake_personal: t.intakePersonal,
      labels: t.labels,
      kind: t.kind,
      appointment_at: t.appointmentAt,
    })
    .from(t)
    .where(
      and(
        eq(t.organizationId, organizationId),
        gte(t.createdAt, zone.from),
        lt(t.createdAt, zone.to),
        inIds(t.queueId, zone.queueIds),
        or(gt(t.createdAt, after.at), and(eq(t.createdAt, after.at), gt(t.id, after.id))),
      ),
    )
    .orderBy(t.createdAt, t.id)
    .limit(EXPORT_PAGE);
}

type ExportRow = Awaited<ReturnType<ReturnType<typeof exportPageQuery>["all"]>>[number];

/** The queue's name, service and location (the filter's, else the service's first), and the zone its times are read in. */
async function queueFacts({ db }: Deps, scope: AnalyticsScope, locationId: string | undefined): Promise<Map<string, QueueFacts>> {
  if (scope.queueIds.length === 0) return new Map();
  const q = alias(queues, "q");
  const s = alias(services, "s");
  const l = alias(locations, "l");
  const sl = alias(serviceLocations, "sl");
  const l2 = alias(locations, "l2");
  const firstLocation = db
    .select({ id: l2.id })
    .from(sl)
    .innerJoin(l2, eq(l2.id, sl.locationId))
    .where(and(eq(sl.serviceId, q.serviceId), locationId === undefined ? undefined : eq(l2.id, locationId)))
    .orderBy(l2.createdAt, l2.id)
    .limit(1);
  const rows = await db
    .select({ id: q.id, name: q.name, serviceId: s.id, serviceName: s.name, locationId: l.id, locationName: l.name })
    .from(q)
    .innerJoin(s, eq(s.id, q.serviceId))
    .leftJoin(l, eq(l.id, sql`${firstLocation}`))
    .where(inIds(q.id, scope.queueIds))
    .all();
  const zoneOf = new Map<string, string>();
  for (const zone of scope.zones) for (const id of zone.queueIds) zoneOf.set(id, zone.timeZone);
  return new Map(rows.map(({ id, ...facts }) => [id, { ...facts, timeZone: zoneOf.get(id) ?? "UTC" }]));
}

/** How the ticket ended, in the analytics' words; `open` while it is still in the line. */
export function outcomeOf(status: string, transferredToId: string | null): string {
  if (status === "served") return "served";
  if (status === "expired" || status === "skipped") return "no_show";
  if (status === "cancelled") return transferredToId !== null ? "transferred" : "cancelled";
  return "open";
}

const minutesBetween = (start: number | null, end: number | null): number | null =>
  start === null || end === null ? null : Math.round(((end - start) / 60_000) * 100) / 100;

/** The organization's desks by id (a branch has a handful; read once per export). */
async function deskNames({ db }: Deps, organizationId: string): Promise<Map<string, string>> {
  const rows = await db.select({ id: desks.id, name: desks.name }).from(desks).where(eq(desks.organizationId, organizationId)).all();
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** Both sides of the answers as one JSON object; null (an empty cell) when there are none. */
function intakeCell(open: string | null, personal: string | null): string | null {
  if (open === null && personal === null) return null;
  return JSON.stringify({ ...(open === null ? {} : JSON.parse(open)), ...(personal === null ? {} : JSON.parse(personal)) });
}

function record(r: ExportRow, q: QueueFacts | undefined, desks: Map<string, string>): string {
  const zone = q?.timeZone ?? "UTC";
  const at = (ms: number | null) => (ms === null ? null : isoInZone(ms, zone));
  const values: CsvValue[] = [
    r.id,
    r.display_code,
    r.queue_id,
    q?.name,
    q?.serviceId,
    q?.serviceName,
    q?.locationId,
    q?.locationName,
    at(r.created_at),
    at(r.called_at),
    at(r.served_at),
    minutesBetween(r.created_at, r.called_at),
    minutesBetween(r.serving_at, r.served_at),
    channelOf(r.source),
    r.status,
    outcomeOf(r.status, r.transferred_to_id),
    r.assigned_to_id,
    r.desk_id === null ? null : (desks.get(r.desk_id) ?? null),
    r.is_ghost_mode,
    r.visitor_name,
    r.outcome,
    r.desk_id,
    r.counter,
    intakeCell(r.intake, r.intake_personal),
    r.labels === null ? null : (JSON.parse(r.labels) as string[]).join(" "),
    r.kind,
    at(r.appointment_at),
    minutesBetween(r.appointment_at, r.appointment_at === null ? null : r.created_at),
  ];
  return csvRecord(values);
}

/**
 * The export as a byte stream: the BOM and header first, then one page per pull, zone by
 * zone (each zone's range is read in its own time zone, as the analytics reads are).
 */
export async function ticketsCsvStream(
  deps: Deps,
  scope: AnalyticsScope,
  locationId: string | undefined,
): Promise<ReadableStream<Uint8Array>> {
  const [facts, desks] = await Promise.all([queueFacts(deps, scope, locationId), deskNames(deps, scope.organizationId)]);
  const zones = scope.zones.filter((z) => z.queueIds.length > 0);
  const encoder = new TextEncoder();
  let zoneIndex = 0;
  let cursor: { at: number; id: string } | null = null;
  let headerSent = false;

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!headerSent) {
          headerSent = true;
          controller.enqueue(encoder.encode(UTF8_BOM + csvRecord([...EXPORT_COLUMNS])));
          return;
        }
        while (zoneIndex < zones.length) {
          const zone = zones[zoneIndex]!;
          const after = cursor ?? { at: zone.from, id: "" };
          const rows = await exportPageQuery(deps, scope.organizationId, zone, after).all();
          if (rows.length < EXPORT_PAGE) {
            zoneIndex += 1;
            cursor = null;
          } else {
            const last = rows[rows.length - 1]!;
            cursor = { at: last.created_at, id: last.id };
          }
          if (rows.length > 0) {
            controller.enqueue(encoder.encode(rows.map((r) => record(r, facts.get(r.queue_id), desks)).join("")));
            return;
          }
        }
        controller.close();
      },
    },
    { highWaterMark: 1 },
  );
}
