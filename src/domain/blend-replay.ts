// The blend replay (docs/blend.md, "Replay"): a past period's tickets called again under another
// blend policy, as pure functions. The desks keep the rhythm they had (each calls no earlier than
// it did that day, and no earlier than the end of the service it would have been giving), each
// call takes the ticket the policy puts first at that moment (blendOrder, the room's own order),
// and the waits are measured the same way for what happened and for what would have.

import { blendOrder, type BlendPolicy, type BlendTicket, type PlacementRule, type TicketKind } from "./blend";

/** A ticket of the period as its history recorded it. */
export interface RecordedTicket extends BlendTicket {
  displayCode: string;
  /** When it was called. */
  calledAt: number;
  /** Who called it (a desk's operator); null when unknown. */
  calledBy: string | null;
  /** Call to done (ms): the time its desk spent on it; 0 when it ended without being served. */
  serviceMs: number;
}

export interface ReplayCall {
  ticketId: string;
  displayCode: string;
  kind: TicketKind;
  calledAt: number;
  /** Minutes waited (see waitMs). */
  waitMinutes: number;
  /** The placement it was called under; null for what happened (the record keeps none). */
  rule: PlacementRule | null;
}

export interface WaitFigures {
  count: number;
  meanWaitMinutes: number | null;
  p90WaitMinutes: number | null;
  longestWaitMinutes: number | null;
}

export interface AppointmentFigures extends WaitFigures {
  /** Appointments checked in on time and called after their time. */
  calledLate: number;
}

export interface ReplayOutcome {
  walkIns: WaitFigures;
  appointments: AppointmentFigures;
  calls: ReplayCall[];
}

const MINUTE = 60_000;

/**
 * What a ticket waited if called at `calledAt`: a walk-in (and a late appointment) from its
 * arrival; an appointment checked in on time from its time, or from its arrival when it came
 * after it (an early arrival's minutes before its time are not a wait). Never negative.
 */
export function waitMs(t: BlendTicket, calledAt: number): number {
  const from = t.kind === "appointment" && !t.late && t.appointmentAt !== null ? Math.max(t.joinedAt, t.appointmentAt) : t.joinedAt;
  return Math.max(0, calledAt - from);
}

const round1 = (n: number) => Math.round(n * 10) / 10;

function figures(waits: number[]): WaitFigures {
  if (waits.length === 0) return { count: 0, meanWaitMinutes: null, p90WaitMinutes: null, longestWaitMinutes: null };
  const sorted = [...waits].sort((a, b) => a - b);
  const mean = sorted.reduce((s, w) => s + w, 0) / sorted.length;
  // Nearest rank: the smallest wait at least 90% of the tickets did not exceed.
  const p90 = sorted[Math.ceil(0.9 * sorted.length) - 1]!;
  return {
    count: sorted.length,
    meanWaitMinutes: round1(mean / MINUTE),
    p90WaitMinutes: round1(p90 / MINUTE),
    longestWaitMinutes: round1(sorted[sorted.length - 1]! / MINUTE),
  };
}

/** The figures of a sequence of calls (each ticket once). */
export function outcomeOf(calls: readonly { ticket: RecordedTicket; calledAt: number; rule: PlacementRule | null }[]): ReplayOutcome {
  const walk: number[] = [];
  const apt: number[] = [];
  let calledLate = 0;
  const out: ReplayCall[] = [];
  for (const { ticket: t, calledAt, rule } of calls) {
    const w = waitMs(t, calledAt);
    if (t.kind === "appointment") {
      apt.push(w);
      if (!t.late && t.appointmentAt !== null && calledAt > t.appointmentAt) calledLate++;
    } else walk.push(w);
    out.push({ ticketId: t.id, displayCode: t.displayCode, kind: t.kind, calledAt, waitMinutes: round1(w / MINUTE), rule });
  }
  return { walkIns: figures(walk), appointments: { ...figures(apt), calledLate }, calls: out };
}

/** What happened: the recorded calls, in the order they were made. */
export function recordedOutcome(tickets: readonly RecordedTicket[]): ReplayOutcome {
  const order = [...tickets].sort((a, b) => a.calledAt - b.calledAt || a.orderKey - b.orderKey);
  return outcomeOf(order.map((ticket) => ({ ticket, calledAt: ticket.calledAt, rule: null })));
}

interface Desk {
  key: string;
  /** The desk's recorded call times, in order. */
  recorded: number[];
  next: number;
  /** When it may call again in the replay. */
  freeAt: number;
}

/**
 * The period replayed under `policy`. Each desk (the operator who called) makes as many calls as
 * it did; its k-th call comes at its recorded k-th call, or later when the service it would have
 * been giving (the replayed ticket's own recorded service time) ends later, or when nobody has
 * arrived yet. The earliest desk calls first; it takes the first ticket of the blended order of
 * everyone arrived and not yet called.
 */
export function replayBlend(tickets: readonly RecordedTicket[], policy: BlendPolicy): ReplayOutcome {
  const byDesk = new Map<string, number[]>();
  for (const t of tickets) {
    const key = t.calledBy ?? "";
    const list = byDesk.get(key) ?? [];
    list.push(t.calledAt);
    byDesk.set(key, list);
  }
  const desks: Desk[] = [...byDesk.entries()].map(([key, recorded]) => {
    recorded.sort((a, b) => a - b);
    return { key, recorded, next: 0, freeAt: recorded[0]! };
  });
  const left = [...tickets].sort((a, b) => a.joinedAt - b.joinedAt || a.orderKey - b.orderKey);
  const calls: { ticket: RecordedTicket; calledAt: number; rule: PlacementRule | null }[] = [];
  while (left.length > 0) {
    let desk: Desk | undefined;
    for (const d of desks) {
      if (d.next >= d.recorded.length) continue;
      if (!desk || d.freeAt < desk.freeAt || (d.freeAt === desk.freeAt && d.key < desk.key)) desk = d;
    }
    if (!desk) break;
    const at = Math.max(desk.freeAt, left[0]!.joinedAt);
    const arrived = left.filter((t) => t.joinedAt <= at);
    const first = blendOrder(arrived, policy, at)[0]!;
    calls.push({ ticket: first.ticket, calledAt: at, rule: first.placement.rule });
    left.splice(left.indexOf(first.ticket), 1);
    desk.next++;
    if (desk.next < desk.recorded.length) desk.freeAt = Math.max(desk.recorded[desk.next]!, at + first.ticket.serviceMs);
  }
  return outcomeOf(calls);
}
