import { channelOf } from "../domain/analytics";
import { csvRecord, isoInZone, UTF8_BOM, type CsvValue } from "../domain/csv";
import type { AnalyticsScope } from "./analytics-scope";
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

interface ExportRow {
  id: string;
  queue_id: string;
  display_code: string;
  status: string;
  source: string;
  visitor_name: string | null;
  assigned_to_id: string | null;
  is_ghost_mode: number;
  created_at: number;
  called_at: number | null;
  serving_at: number | null;
  served_at: number | null;
  transferred_to_id: string | null;
  outcome: string | null;
  desk_id: string | null;
  counter: string | null;
  intake: string | null;
  intake_personal: string | null;
  labels: string | null;
  kind: string;
  appointment_at: number | null;
}

/** One keyset page: tickets of these queues created in [from, to), after the cursor. */
export const EXPORT_PAGE_SQL = `SELECT id, queue_id, display_code, status, source, visitor_name, assigned_to_id, is_ghost_mode,
  created_at, called_at, serving_at, served_at, transferred_to_id, outcome, desk_id, counter, intake, intake_personal, labels,
  kind, appointment_at
  FROM tickets
  WHERE organization_id = ?1 AND created_at >= ?2 AND created_at < ?3
    AND queue_id IN (SELECT value FROM json_each(?4))
    AND (created_at > ?5 OR (created_at = ?5 AND id > ?6))
  ORDER BY created_at, id LIMIT ?7`;

/** The queue's name, service and location (the filter's, else the service's first), and the zone its times are read in. */
async function queueFacts(db: D1Database, scope: AnalyticsScope, locationId: string | undefined): Promise<Map<string, QueueFacts>> {
  if (scope.queueIds.length === 0) return new Map();
  const rows = await db
    .prepare(
      `SELECT q.id, q.name, s.id AS service_id, s.name AS service_name, l.id AS location_id, l.name AS location_name
       FROM queues q JOIN services s ON s.id = q.service_id
       LEFT JOIN locations l ON l.id = (
         SELECT l2.id FROM service_locations sl JOIN locations l2 ON l2.id = sl.location_id
         WHERE sl.service_id = q.service_id AND (?1 IS NULL OR l2.id = ?1) ORDER BY l2.created_at, l2.id LIMIT 1)
       WHERE q.id IN (SELECT value FROM json_each(?2))`,
    )
    .bind(locationId ?? null, JSON.stringify(scope.queueIds))
    .all<{
      id: string;
      name: string;
      service_id: string;
      service_name: string;
      location_id: string | null;
      location_name: string | null;
    }>();
  const zoneOf = new Map<string, string>();
  for (const zone of scope.zones) for (const id of zone.queueIds) zoneOf.set(id, zone.timeZone);
  return new Map(
    rows.results.map((r) => [
      r.id,
      {
        name: r.name,
        serviceId: r.service_id,
        serviceName: r.service_name,
        locationId: r.location_id,
        locationName: r.location_name,
        timeZone: zoneOf.get(r.id) ?? "UTC",
      },
    ]),
  );
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
async function deskNames(db: D1Database, organizationId: string): Promise<Map<string, string>> {
  const rows = await db
    .prepare("SELECT id, name FROM desks WHERE organization_id = ?1")
    .bind(organizationId)
    .all<{ id: string; name: string }>();
  return new Map(rows.results.map((r) => [r.id, r.name]));
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
    r.is_ghost_mode === 1,
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
  { env: { DB: db } }: Deps,
  scope: AnalyticsScope,
  locationId: string | undefined,
): Promise<ReadableStream<Uint8Array>> {
  const [facts, desks] = await Promise.all([queueFacts(db, scope, locationId), deskNames(db, scope.organizationId)]);
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
          const page = await db
            .prepare(EXPORT_PAGE_SQL)
            .bind(scope.organizationId, zone.from, zone.to, JSON.stringify(zone.queueIds), after.at, after.id, EXPORT_PAGE)
            .all<ExportRow>();
          const rows = page.results;
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
