// The blend of appointments and walk-ins in one line (docs/blend.md), as pure functions: the
// queue's policy, where each waiting ticket stands and why (its placement, in plain words),
// and the order the room calls them in. The room applies them when it picks the next ticket
// and when it answers positions; nothing here reads a clock or storage.

import { catalogue, fillText, isLanguage, type Language } from "./languages";

export const TICKET_KINDS = ["walk_in", "appointment"] as const;
export type TicketKind = (typeof TICKET_KINDS)[number];

/**
 * A queue's blend policy (PUT /v1/business/queues/{id}/blend). Minutes. When check-in opens and
 * what a late check-in becomes are the service's booking settings (`checkInOpensMinutes`,
 * `lateGraceMinutes`, `lateBecomes`): a late ticket reaches the room already marked.
 */
export interface BlendPolicy {
  /** An appointment ticket goes ahead of walk-ins from this long before its time. */
  appointmentsFirstFromMinutes: number;
  /** A walk-in that has waited this long goes ahead of appointments; null: no cap. */
  walkInMaxWaitMinutes: number | null;
}

/** What a queue without a policy of its own applies. */
export const DEFAULT_BLEND_POLICY: BlendPolicy = {
  appointmentsFirstFromMinutes: 0,
  walkInMaxWaitMinutes: null,
};

/** The policy with the place's time zone, as the room's copy of the rules holds it. */
export interface BlendCopy {
  policy: BlendPolicy;
  /** IANA zone the appointment times are told in ("Rendez-vous de 10 h 30"). */
  timeZone: string;
}

export const DEFAULT_BLEND_COPY: BlendCopy = { policy: DEFAULT_BLEND_POLICY, timeZone: "UTC" };

/**
 * Why a waiting ticket stands where it does. In the order they are called:
 *  - `priority`: VIP, restored or returned-first tickets, ahead of everyone (as before);
 *  - `walk_in_over_cap`: a walk-in (or a late appointment) that waited past the cap;
 *  - `appointment_due`: an appointment from `appointmentsFirstFromMinutes` before its time, by time;
 *  - `walk_in_arrival`: a walk-in under the cap, by arrival;
 *  - `late_appointment`: checked in past its grace, placed by arrival like a walk-in;
 *  - `appointment_early`: an appointment checked in before its window, behind the walk-ins until it opens.
 */
export const PLACEMENT_RULES = [
  "priority",
  "walk_in_over_cap",
  "appointment_due",
  "walk_in_arrival",
  "late_appointment",
  "appointment_early",
] as const;
export type PlacementRule = (typeof PLACEMENT_RULES)[number];

const RANK: Record<PlacementRule, number> = {
  priority: 0,
  walk_in_over_cap: 1,
  appointment_due: 2,
  walk_in_arrival: 3,
  late_appointment: 3,
  appointment_early: 4,
};

/** A waiting ticket as the blend sees it. */
export interface BlendTicket {
  id: string;
  /** The priority lane (0) comes first whatever the policy. */
  lane: number;
  /** The ticket's order in its lane (its number, unless it was moved). */
  orderKey: number;
  kind: TicketKind;
  /** The appointment's start (epoch ms); null for a walk-in. */
  appointmentAt: number | null;
  /** Checked in past its grace: placed as a walk-in. */
  late: boolean;
  /** When it joined the line (its wait runs from here). */
  joinedAt: number;
}

export interface Placement {
  rule: PlacementRule;
  /** When this placement began to apply (epoch ms). */
  since: number;
  /** Minutes waited (walk-ins), for the reason's words. */
  waitedMinutes: number | null;
}

const MINUTE = 60_000;

/** Where one ticket stands at `at` under `policy`: it depends on the ticket alone, not on the others. */
export function placementOf(t: BlendTicket, policy: BlendPolicy, at: number): Placement {
  if (t.lane === 0) return { rule: "priority", since: t.joinedAt, waitedMinutes: null };
  if (t.kind === "appointment" && !t.late && t.appointmentAt !== null) {
    const opens = t.appointmentAt - policy.appointmentsFirstFromMinutes * MINUTE;
    return at >= opens
      ? { rule: "appointment_due", since: Math.max(opens, t.joinedAt), waitedMinutes: null }
      : { rule: "appointment_early", since: t.joinedAt, waitedMinutes: null };
  }
  const waited = Math.max(0, Math.floor((at - t.joinedAt) / MINUTE));
  const cap = policy.walkInMaxWaitMinutes;
  if (cap !== null && at - t.joinedAt >= cap * MINUTE) {
    return { rule: "walk_in_over_cap", since: t.joinedAt + cap * MINUTE, waitedMinutes: waited };
  }
  return { rule: t.kind === "appointment" ? "late_appointment" : "walk_in_arrival", since: t.joinedAt, waitedMinutes: waited };
}

/**
 * The waiting tickets in calling order at `at`: by placement (the order above), then within
 * each placement appointments by their time and everyone else by their order in the lane.
 * Stable and total (ties end on the id), so the room and a replay agree.
 */
export function blendOrder<T extends BlendTicket>(
  tickets: readonly T[],
  policy: BlendPolicy,
  at: number,
): { ticket: T; placement: Placement }[] {
  const placed = tickets.map((ticket) => ({ ticket, placement: placementOf(ticket, policy, at) }));
  return placed.sort((a, b) => {
    const r = RANK[a.placement.rule] - RANK[b.placement.rule];
    if (r !== 0) return r;
    const byTime =
      a.placement.rule === "appointment_due" || a.placement.rule === "appointment_early"
        ? (a.ticket.appointmentAt ?? 0) - (b.ticket.appointmentAt ?? 0)
        : 0;
    if (byTime !== 0) return byTime;
    if (a.ticket.orderKey !== b.ticket.orderKey) return a.ticket.orderKey - b.ticket.orderKey;
    return a.ticket.id < b.ticket.id ? -1 : a.ticket.id > b.ticket.id ? 1 : 0;
  });
}

/** Late: checked in after start + grace (the service's `lateGraceMinutes`). */
export function isLate(appointmentAt: number, checkedInAt: number, lateGraceMinutes: number): boolean {
  return checkedInAt > appointmentAt + lateGraceMinutes * MINUTE;
}

/** When check-in opens for an appointment starting at `startAt` (the service's `checkInOpensMinutes`). */
export function checkInOpensAt(startAt: number, checkInOpensMinutes: number): number {
  return startAt - checkInOpensMinutes * MINUTE;
}

// ---- the reason, in words ------------------------------------------------------------------

export type PlacementLanguage = Language;

/** A ticket's language as the reason is told in: any catalogue language it names, else French. */
export function placementLanguage(language: string | null): PlacementLanguage {
  const code = language?.toLowerCase().slice(0, 2);
  return code !== undefined && isLanguage(code) ? code : "fr";
}

/** "10 h 30" (fr), else the language's own wall-clock form ("10:30"), in `timeZone`. */
export function clockTime(at: number, language: PlacementLanguage, timeZone: string): string {
  const locale = language === "fr" ? "en-GB" : catalogue(language).meta.locale;
  const parts = new Intl.DateTimeFormat(locale, { timeZone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).formatToParts(at);
  const hour = parts.find((p) => p.type === "hour")?.value ?? "00";
  const minute = parts.find((p) => p.type === "minute")?.value ?? "00";
  return language === "fr" ? `${Number(hour)} h ${minute}` : `${hour}:${minute}`;
}

/** The placement in plain words, naming its rule (docs/blend.md lists them), from the language's catalogue. */
export function placementReason(
  t: Pick<BlendTicket, "appointmentAt">,
  p: Placement,
  policy: BlendPolicy,
  language: PlacementLanguage,
  timeZone: string,
): string {
  const time = (at: number) => clockTime(at, language, timeZone);
  const words = catalogue(language).placement;
  const cap = policy.walkInMaxWaitMinutes;
  switch (p.rule) {
    case "priority":
      return words.priority;
    case "appointment_due":
      return fillText(words.appointmentDue, { time: time(t.appointmentAt!), since: time(p.since) });
    case "appointment_early":
      return fillText(words.appointmentEarly, {
        time: time(t.appointmentAt!),
        opens: time(t.appointmentAt! - policy.appointmentsFirstFromMinutes * MINUTE),
      });
    case "walk_in_over_cap":
      return fillText(words.walkInOverCap, { minutes: p.waitedMinutes, cap });
    case "late_appointment":
      return fillText(words.lateAppointment, { time: time(t.appointmentAt!) });
    case "walk_in_arrival":
      if (cap === null) return words.walkInArrival;
      return fillText(words.walkInArrivalCapped, { minutes: p.waitedMinutes, cap });
  }
}

/**
 * How many appointments now waiting behind a walk-in (checked in early: `opensAt` is when each
 * goes ahead of walk-ins) will pass it before its turn (docs/blend.md, "Estimates"). The walk-in
 * at `position` waits `waitMinutes(position)`; each appointment whose window opens within that
 * wait (and before the walk-in reaches the cap, which no appointment passes) adds a place, and
 * the longer wait may let more in, until it settles.
 */
export function appointmentsDueAhead(
  opensAt: readonly number[],
  policy: BlendPolicy,
  joinedAt: number,
  position: number,
  waitMinutes: (position: number) => number,
  at: number,
): number {
  const capAt = policy.walkInMaxWaitMinutes === null ? Infinity : joinedAt + policy.walkInMaxWaitMinutes * MINUTE;
  const eligible = opensAt.filter((o) => o > at && o < capAt);
  let ahead = 0;
  for (;;) {
    const until = at + waitMinutes(position + ahead) * MINUTE;
    const next = eligible.filter((o) => o <= until).length;
    if (next <= ahead) return ahead;
    ahead = next;
  }
}
