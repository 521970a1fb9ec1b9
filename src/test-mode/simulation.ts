import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { findQueue } from "../tickets/queues";
import { callNext, completeTicket, issueTicket, skipAbsent, startServing } from "../tickets/tickets";
import { type Deps, depsOf } from "../http/deps";

// A simulated day in a test-mode twin (issue 41, docs/test-mode.md "Simulated day"). One
// Durable Object per simulation; its alarm steps a virtual clock that runs `speed` times faster
// than the real one. Each step replays, in virtual-time order, the arrivals (Poisson at
// `arrivalsPerHour`), the desks' calls when a desk is free, the services (exponential around
// `serviceMinutes`) and the no-shows (`noShowRate`), through the same functions the routes use,
// with `at` = the virtual time: the rooms emit the events, webhooks and analytics of a real day.

/** Real time between two steps of the alarm. */
export const STEP_MS = 1000;
/**
 * A called visitor who will not come is marked absent this long (virtual) after the call, or
 * half the queue's no-show timeout if shorter (the room would expire the call itself first), and
 * at the latest just before the day's end: no call is left for the room to expire later, when the
 * real clock reaches it, which would change the day's figures after it finished.
 */
export const NO_SHOW_AFTER_MS = 2 * 60_000;

export type SimulationStatus = "running" | "finished" | "stopped" | "failed";

export interface SimulationSpec {
  queueId: string;
  arrivalsPerHour: number;
  serviceMinutes: number;
  noShowRate: number;
  durationMinutes: number;
  desks: number;
  speed: number;
  seed: number;
}

interface Desk {
  /** The ticket at the desk; null: free. */
  ticketId: string | null;
  /** When the desk finishes with it (virtual ms). */
  until: number;
  noShow: boolean;
}

export interface SimulationState {
  id: string;
  organizationId: string;
  /** The key that started it: the tickets' and the calls' actor, as a walk-in of that key. */
  actorId: string;
  spec: SimulationSpec;
  status: SimulationStatus;
  startedAt: number;
  virtualStart: number;
  virtualNow: number;
  virtualEnd: number;
  nextArrival: number;
  rng: number;
  desks: Desk[];
  joined: number;
  called: number;
  served: number;
  noShows: number;
  error: string | null;
}

/** mulberry32: a small seeded generator; answers the next state and a draw in [0, 1). */
function draw(state: number): [number, number] {
  const next = (state + 0x6d2b79f5) | 0;
  let t = next;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return [next, ((t ^ (t >>> 14)) >>> 0) / 4294967296];
}

function exponential(s: SimulationState, meanMs: number): number {
  const [next, u] = draw(s.rng);
  s.rng = next;
  return Math.max(1000, Math.round(-Math.log(1 - u) * meanMs));
}

function chance(s: SimulationState, p: number): boolean {
  const [next, u] = draw(s.rng);
  s.rng = next;
  return u < p;
}

export function newSimulation(id: string, organizationId: string, actorId: string, spec: SimulationSpec, at: number): SimulationState {
  const s: SimulationState = {
    id,
    organizationId,
    actorId,
    spec,
    status: "running",
    startedAt: at,
    virtualStart: at,
    virtualNow: at,
    virtualEnd: at + spec.durationMinutes * 60_000,
    nextArrival: 0,
    rng: spec.seed | 0,
    desks: Array.from({ length: spec.desks }, () => ({ ticketId: null, until: at, noShow: false })),
    joined: 0,
    called: 0,
    served: 0,
    noShows: 0,
    error: null,
  };
  s.nextArrival = spec.arrivalsPerHour > 0 ? at + exponential(s, 3_600_000 / spec.arrivalsPerHour) : Number.POSITIVE_INFINITY;
  return s;
}

/**
 * Runs every happening of the virtual clock up to `until` (excluded), in time order: a desk
 * finishing before an arrival at the same instant. Stops at the day's end.
 */
export async function advance(deps: Deps, s: SimulationState, until: number, stopping: () => boolean = () => false): Promise<void> {
  const end = Math.min(until, s.virtualEnd);
  const queue = await findQueue(deps, s.spec.queueId);
  const serviceMs = s.spec.serviceMinutes * 60_000;
  const arrivalMs = s.spec.arrivalsPerHour > 0 ? 3_600_000 / s.spec.arrivalsPerHour : Number.POSITIVE_INFINITY;
  for (;;) {
    if (stopping()) return;
    // A free desk calls the head of the line at the current instant.
    for (let i = 0; i < s.desks.length; i++) {
      const desk = s.desks[i]!;
      if (desk.ticketId !== null) continue;
      const at = Math.max(s.virtualNow, desk.until);
      if (at >= end || stopping()) continue;
      const summary = await callNextOrNull(deps, queue, deskOperator(s, i), at, `Desk ${i + 1}`);
      if (!summary) continue;
      s.called++;
      desk.ticketId = summary;
      desk.noShow = chance(s, s.spec.noShowRate);
      if (desk.noShow) {
        const wait = Math.min(NO_SHOW_AFTER_MS, (queue.noShowTimeoutMinutes * 60_000) / 2);
        desk.until = Math.min(at + wait, s.virtualEnd - 1);
      } else {
        await startServing(deps, queue, summary, at);
        desk.until = at + exponential(s, serviceMs);
      }
    }
    const busy = s.desks.filter((d) => d.ticketId !== null);
    const nextDesk = busy.reduce<Desk | null>((a, d) => (a === null || d.until < a.until ? d : a), null);
    const nextAt = Math.min(nextDesk?.until ?? Number.POSITIVE_INFINITY, s.nextArrival);
    if (nextAt >= end || stopping()) break;
    s.virtualNow = nextAt;
    if (nextDesk && nextDesk.until === nextAt) {
      const ticketId = nextDesk.ticketId!;
      if (nextDesk.noShow) {
        await skipAbsent(deps, queue, ticketId, "no_show", nextAt);
        s.noShows++;
      } else {
        await completeTicket(deps, queue, ticketId, nextAt);
        s.served++;
      }
      nextDesk.ticketId = null;
      nextDesk.until = nextAt;
      continue;
    }
    await issueTicket(
      deps,
      queue,
      {
        userId: s.actorId,
        partySize: 1,
        isPriority: false,
        isGhostMode: true,
        visitorName: `Simulated visitor ${s.joined + 1}`,
        phone: null,
        language: null,
        source: "operator",
      },
      nextAt,
    );
    s.joined++;
    s.nextArrival = nextAt + exponential(s, arrivalMs);
  }
  if (stopping()) return;
  s.virtualNow = Math.max(s.virtualNow, end);
  if (s.virtualNow >= s.virtualEnd) s.status = "finished";
}

/**
 * Each desk is an operator of its own (a call completes what its operator was serving): the key
 * that started the simulation, suffixed with the desk's number.
 */
export function deskOperator(s: SimulationState, desk: number): string {
  return `${s.actorId}:desk-${desk + 1}`;
}

/** The called ticket's id, or null when nobody waits. */
async function callNextOrNull(
  deps: Deps,
  queue: Awaited<ReturnType<typeof findQueue>>,
  actorId: string,
  at: number,
  counter: string,
): Promise<string | null> {
  try {
    const ticket = await callNext(deps, queue, actorId, null, at, counter);
    return ticket.id;
  } catch (error) {
    if (error instanceof Error && "code" in error && error.code === "QUEUE_EMPTY") return null;
    throw error;
  }
}

export class Simulation extends DurableObject<Env> {
  /** Set by stop(): the step under way makes no further room command. */
  private stopping = false;
  /** The step under way, which stop() waits for before it answers. */
  private step: Promise<void> | null = null;

  async start(state: SimulationState): Promise<void> {
    await this.ctx.storage.put("state", state);
    await this.ctx.storage.setAlarm(Date.now() + STEP_MS);
  }

  async read(): Promise<SimulationState | null> {
    return (await this.ctx.storage.get<SimulationState>("state")) ?? null;
  }

  /** Stops a running simulation: once it answers, nothing more happens. Answers its state. */
  async stop(): Promise<SimulationState | null> {
    this.stopping = true;
    await this.ctx.storage.deleteAlarm();
    if (this.step) await this.step.catch(() => undefined);
    const s = await this.read();
    if (!s) return null;
    if (s.status === "running") {
      s.status = "stopped";
      await this.ctx.storage.put("state", s);
    }
    return s;
  }

  override async alarm(): Promise<void> {
    const s = await this.read();
    if (!s || s.status !== "running" || this.stopping) return;
    const until = s.virtualNow + STEP_MS * s.spec.speed;
    this.step = (async () => {
      try {
        await advance(depsOf(this.env), s, until, () => this.stopping);
      } catch (error) {
        s.status = "failed";
        s.error = error instanceof Error ? error.message : String(error);
      }
      if (this.stopping && s.status === "running") s.status = "stopped";
      await this.ctx.storage.put("state", s);
      if (s.status === "running") await this.ctx.storage.setAlarm(Date.now() + STEP_MS);
    })();
    try {
      await this.step;
    } finally {
      this.step = null;
    }
  }
}
