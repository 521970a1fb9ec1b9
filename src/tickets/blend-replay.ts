import { and, asc, eq, gte, isNotNull, lt } from "drizzle-orm";
import { locations, serviceLocations, services, tickets } from "../db/schema";
import { DEFAULT_BLEND_POLICY, isLate, type BlendPolicy } from "../domain/blend";
import { recordedOutcome, replayBlend, type RecordedTicket, type ReplayOutcome } from "../domain/blend-replay";
import { resolveRange } from "../domain/analytics-range";
import { DEFAULT_BOOKING } from "../domain/slots";
import { validationError } from "../http/errors";
import type { QueueRow } from "../http/credentials/queues";
import type { InstantInput } from "../lib/instant";
import { isValidTimeZone } from "../domain/recurrence";
import { blendOf } from "./blend";
import type { Deps } from "../http/deps";

// POST /v1/business/queues/{id}/blend/replay (docs/blend.md, "Replay"): the period's called
// tickets read from D1's history, replayed under the policy given (domain/blend-replay.ts).

/** At most a month per replay, and this many called tickets in it. */
export const REPLAY_MAX_DAYS = 31;
export const REPLAY_MAX_TICKETS = 5_000;

export interface ReplayAnswer {
  queueId: string;
  from: number;
  to: number;
  policy: BlendPolicy;
  policyInForce: BlendPolicy;
  happened: ReplayOutcome;
  replayed: ReplayOutcome;
}

export async function replayPeriod(
  { db }: Deps,
  queue: QueueRow,
  given: Partial<BlendPolicy>,
  fromInput: InstantInput,
  toInput: InstantInput,
  at: number,
): Promise<ReplayAnswer> {
  const [serviceRows, zoneRows] = await db.batch([
    db.select({ booking: services.booking }).from(services).where(eq(services.id, queue.serviceId)),
    db
      .select({ timeZone: locations.timezone })
      .from(serviceLocations)
      .innerJoin(locations, eq(locations.id, serviceLocations.locationId))
      .where(eq(serviceLocations.serviceId, queue.serviceId))
      .limit(1),
  ]);
  const zone = zoneRows[0]?.timeZone;
  const { from, to } = resolveRange(fromInput, toInput, zone && isValidTimeZone(zone) ? zone : "UTC", at);
  if (to <= from) throw validationError("to", "must be after from");
  if (to - from > REPLAY_MAX_DAYS * 86_400_000) throw validationError("to", `a replay covers ${REPLAY_MAX_DAYS} days at most`);
  const grace = { ...DEFAULT_BOOKING, ...(serviceRows[0]?.booking ?? {}) }.lateGraceMinutes;

  const rows = await db
    .select({
      id: tickets.id,
      number: tickets.number,
      displayCode: tickets.displayCode,
      isPriority: tickets.isPriority,
      kind: tickets.kind,
      appointmentAt: tickets.appointmentAt,
      createdAt: tickets.createdAt,
      calledAt: tickets.calledAt,
      servedAt: tickets.servedAt,
      assignedToId: tickets.assignedToId,
    })
    .from(tickets)
    .where(and(eq(tickets.queueId, queue.id), gte(tickets.createdAt, from), lt(tickets.createdAt, to), isNotNull(tickets.calledAt)))
    .orderBy(asc(tickets.calledAt))
    .limit(REPLAY_MAX_TICKETS + 1)
    .all();
  if (rows.length > REPLAY_MAX_TICKETS) {
    throw validationError("to", `the period holds more than ${REPLAY_MAX_TICKETS} called tickets: replay a shorter one`);
  }
  const recorded: RecordedTicket[] = rows.map((r) => {
    const appointment = r.kind === "appointment" && r.appointmentAt !== null;
    return {
      id: r.id,
      displayCode: r.displayCode,
      lane: r.isPriority ? 0 : 1,
      orderKey: r.number,
      kind: r.kind,
      appointmentAt: appointment ? r.appointmentAt : null,
      late: appointment ? isLate(r.appointmentAt!, r.createdAt, grace) : false,
      joinedAt: r.createdAt,
      calledAt: r.calledAt!,
      calledBy: r.assignedToId,
      serviceMs: r.servedAt !== null ? Math.max(0, r.servedAt - r.calledAt!) : 0,
    };
  });
  const policy: BlendPolicy = { ...DEFAULT_BLEND_POLICY, ...given };
  return {
    queueId: queue.id,
    from,
    to,
    policy,
    policyInForce: blendOf(queue).policy,
    happened: recordedOutcome(recorded),
    replayed: replayBlend(recorded, policy),
  };
}
