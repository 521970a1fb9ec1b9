// The floor's colours and its staff alert (docs/floor.md): pure, so the API (desks/floor.ts)
// and the floor page (src/pages/floor) judge a wait the same way, each with its own clock.

export type WaitLevel = "ok" | "amber" | "red";

/** A line turns amber from this share of its target wait, red once the target is reached. */
export const AMBER_SHARE = 0.75;

/** How a wait stands against the queue's target; always "ok" without a target. */
export function waitLevel(waitedSeconds: number, targetWaitMinutes: number | null): WaitLevel {
  if (targetWaitMinutes === null) return "ok";
  const target = targetWaitMinutes * 60;
  if (waitedSeconds >= target) return "red";
  if (waitedSeconds >= target * AMBER_SHARE) return "amber";
  return "ok";
}

export interface AlertDesk {
  id: string;
  name: string;
  open: boolean;
  /** True while a ticket is at the desk (called, serving or held). */
  busy: boolean;
  queueIds: readonly string[];
}

export interface AlertQueue {
  id: string;
  targetWaitMinutes: number | null;
  /** The longest-waiting visitor of the line, if any. */
  longest: { ticketId: string; displayCode: string; joinedAt: number } | null;
}

export interface FloorAlert {
  queueId: string;
  ticketId: string;
  displayCode: string;
  waitedSeconds: number;
  targetWaitMinutes: number;
  /** Open desks that call from this queue and have nobody at them. */
  idleDesks: { id: string; name: string }[];
}

/**
 * "A visitor has been waiting N s and a desk is idle": one alert per queue whose longest wait
 * has reached its target while an open desk that calls from it has no ticket.
 */
export function floorAlerts(queues: readonly AlertQueue[], desks: readonly AlertDesk[], at: number): FloorAlert[] {
  return queues.flatMap((q) => {
    if (q.targetWaitMinutes === null || !q.longest) return [];
    const waitedSeconds = Math.max(0, Math.floor((at - q.longest.joinedAt) / 1000));
    if (waitLevel(waitedSeconds, q.targetWaitMinutes) !== "red") return [];
    const idleDesks = desks.filter((d) => d.open && !d.busy && d.queueIds.includes(q.id)).map((d) => ({ id: d.id, name: d.name }));
    if (idleDesks.length === 0) return [];
    return [
      {
        queueId: q.id,
        ticketId: q.longest.ticketId,
        displayCode: q.longest.displayCode,
        waitedSeconds,
        targetWaitMinutes: q.targetWaitMinutes,
        idleDesks,
      },
    ];
  });
}
