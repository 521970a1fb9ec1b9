import type { TicketStatus } from "../domain/tickets";
import { constantTimeEqual, sha256Hex } from "../lib/crypto";
import { iso, isoOrNull } from "../lib/time";
import { isLanguage } from "../domain/languages";
import type { RoomClient } from "./contract";
import type { TicketMessage, TicketView, VerdictToken, VisitorTicketData } from "./types";

// The visitor's ticket inside a QueueRoom (docs/widget.md). A widget join hands the visitor a
// token for that one ticket; the room keeps only its SHA-256, beside the ticket, and forgets it
// once the ticket is no longer live (served, cancelled, skipped, expired, transferred), so a
// token dies with its ticket. Sockets follow a ticket with its token: the rooms holding them
// (this one, or another room or socket hub) are this ticket's watchers, and after every change
// each followed ticket whose view moved is pushed to them once.

/**
 * How long a served ticket's token is kept for its verdict: past the feedback window (7 days),
 * so a late answer hears "too late" (410) rather than "unknown" (404).
 */
export const VERDICT_TOKEN_KEEP_MS = 30 * 24 * 3_600_000;

/** A ticket the visitor may still follow and leave; the token dies past these. */
export const LIVE_STATUSES: readonly TicketStatus[] = ["waiting", "called", "serving", "held"];

type Watcher = { ticket_id: string; watcher: string; generation: number };

export class TicketFollowers {
  /** Pushes leave in the order of the changes that made them (labels may need a D1 read). */
  private pushing: Promise<void> = Promise.resolve();
  /** Whether ticket_watchers has rows, once read (undefined: read it); this class is its only writer. */
  private anyWatcher: boolean | undefined;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly sql: SqlStorage,
    /** The ticket as the room answers it; null when unknown here, or the room is not (or no longer) a queue. */
    private readonly view: (ticketId: string, at: number) => TicketView | null,
    /** Another room, by its name (a queue id or a hub's name). */
    private readonly peer: (name: string) => Pick<RoomClient, "peer">,
    /** Delivers to this room's own sockets; answers how many took it. */
    private readonly deliverHere: (ticketId: string, text: string, final: boolean) => number,
  ) {}

  /** Inside the join's transaction: the token's hash beside its new ticket. */
  issue(ticketId: string, tokenHash: string): void {
    this.sql.exec("INSERT OR REPLACE INTO ticket_tokens (ticket_id, hash) VALUES (?, ?)", ticketId, tokenHash);
  }

  /**
   * Inside every ticket write: a ticket that stops being live takes its token with it, except a
   * served one, whose token still opens its verdict (docs/visits.md, feedback) for a while.
   */
  onTicketChange(ticketId: string, status: unknown, at: number): void {
    if (typeof status === "string" && !LIVE_STATUSES.includes(status as TicketStatus)) {
      if (status === "served") {
        this.sql.exec(
          "INSERT OR REPLACE INTO verdict_tokens (ticket_id, hash, served_at) SELECT ticket_id, hash, ? FROM ticket_tokens WHERE ticket_id = ?",
          at,
          ticketId,
        );
        this.sql.exec("DELETE FROM verdict_tokens WHERE served_at < ?", at - VERDICT_TOKEN_KEEP_MS);
      }
      this.sql.exec("DELETE FROM ticket_tokens WHERE ticket_id = ?", ticketId);
    }
  }

  /** What the token opens: its live ticket, or its served ticket's verdict; null for a wrong token. */
  verdict(ticketId: string, tokenHash: string): VerdictToken | null {
    if (this.holds(ticketId, tokenHash)) return { state: "live" };
    const row = this.sql
      .exec<{ hash: string; served_at: number }>("SELECT hash, served_at FROM verdict_tokens WHERE ticket_id = ?", ticketId)
      .toArray()[0];
    const equal = constantTimeEqual(row?.hash ?? "0".repeat(64), tokenHash);
    return row !== undefined && equal ? { state: "served", servedAt: row.served_at } : null;
  }

  /** True when `tokenHash` is the live ticket's (compared in constant time). */
  holds(ticketId: string, tokenHash: string): boolean {
    const row = this.sql.exec<{ hash: string }>("SELECT hash FROM ticket_tokens WHERE ticket_id = ?", ticketId).toArray()[0];
    // Compare against something of the same shape even when there is no row, so the answer's
    // time does not tell whether the ticket exists.
    const equal = constantTimeEqual(row?.hash ?? "0".repeat(64), tokenHash);
    return row !== undefined && equal;
  }

  /** The ticket for its token's holder; null for a wrong token, an unknown or finished ticket. */
  async read(ticketId: string, tokenHash: string, at: number): Promise<VisitorTicketData | null> {
    if (!this.holds(ticketId, tokenHash)) return null;
    const view = this.view(ticketId, at);
    return view ? this.data(view) : null;
  }

  /**
   * A leg of a visit handed on to the next service (docs/visits.md, several services): its served
   * token still opens it, so a page that followed this leg learns where the visitor went
   * (`routedToId`; null while the hand-off is in flight). Null for anything else: a wrong token,
   * a live ticket (read), a last leg, or a hand-off the next queue refused (the visit ended here).
   */
  async routedLeg(ticketId: string, tokenHash: string, at: number): Promise<VisitorTicketData | null> {
    if (this.verdict(ticketId, tokenHash)?.state !== "served") return null;
    const row = this.sql
      .exec<{ routed_to_id: string | null; transferring_to: string | null }>(
        "SELECT routed_to_id, transferring_to FROM tickets WHERE id = ? AND status = 'served'",
        ticketId,
      )
      .toArray()[0];
    if (row === undefined || (row.routed_to_id === null && row.transferring_to === null)) return null;
    const view = this.view(ticketId, at);
    return view?.leg ? this.data(view) : null;
  }

  /** The ticket as it is after a change (no token check: the caller checked before changing it). */
  async after(ticketId: string, at: number): Promise<VisitorTicketData | null> {
    const view = this.view(ticketId, at);
    return view ? this.data(view) : null;
  }

  /**
   * A socket in room `watcher` follows the ticket: answers its data now (null for a wrong
   * token), and from then on every change of it.
   */
  async watch(watcher: string, ticketId: string, token: string, at: number): Promise<VisitorTicketData | null> {
    const data = await this.read(ticketId, await sha256Hex(token), at);
    if (data === null) return null;
    this.sql.exec(
      `INSERT INTO ticket_watchers (ticket_id, watcher, generation) VALUES (?, ?, 1)
       ON CONFLICT (ticket_id, watcher) DO UPDATE SET generation = generation + 1`,
      ticketId,
      watcher,
    );
    this.anyWatcher = true;
    this.sql.exec("INSERT OR REPLACE INTO ticket_pushes (ticket_id, text) VALUES (?, ?)", ticketId, fingerprint(this.view(ticketId, at)!));
    return data;
  }

  /**
   * After every committed change: each followed ticket whose view moved (position, wait,
   * status, counter) is pushed once to each of its watchers. Nothing when no one follows.
   */
  changed(at: number, self: () => string | null): void {
    // Known to be none (issue 43: every change read the table, and few queues have a follower).
    if (this.anyWatcher === false) return;
    const watchers = this.sql.exec<Watcher>("SELECT ticket_id, watcher, generation FROM ticket_watchers").toArray();
    this.anyWatcher = watchers.length > 0;
    if (watchers.length === 0) return;
    const byTicket = new Map<string, Watcher[]>();
    for (const w of watchers) byTicket.set(w.ticket_id, [...(byTicket.get(w.ticket_id) ?? []), w]);
    const pushes: { view: TicketView | null; ticketId: string; to: Watcher[] }[] = [];
    for (const [ticketId, to] of byTicket) {
      const view = this.view(ticketId, at);
      const print = view ? fingerprint(view) : "gone";
      const last = this.sql.exec<{ text: string }>("SELECT text FROM ticket_pushes WHERE ticket_id = ?", ticketId).toArray()[0];
      if (last?.text === print) continue;
      this.sql.exec("INSERT OR REPLACE INTO ticket_pushes (ticket_id, text) VALUES (?, ?)", ticketId, print);
      pushes.push({ view, ticketId, to });
    }
    if (pushes.length === 0) return;
    const here = self();
    this.pushing = this.pushing
      .then(() => this.push(pushes, here))
      .catch((err) => {
        console.warn(`queue room: ticket push failed: ${err instanceof Error ? err.message : String(err)}`);
      });
    this.ctx.waitUntil(this.pushing);
  }

  private async push(pushes: { view: TicketView | null; ticketId: string; to: Watcher[] }[], self: string | null): Promise<void> {
    for (const { view, ticketId, to } of pushes) {
      // A ticket gone from this room (a deleted queue) or no longer live gets its last update,
      // then no one follows it any more.
      const final = view === null || !LIVE_STATUSES.includes(view.status);
      const text = view === null ? null : JSON.stringify({ type: "ticket_update", data: await this.data(view) } satisfies TicketMessage);
      for (const w of to) {
        let delivered = 0;
        if (text !== null) {
          try {
            delivered =
              w.watcher === self
                ? this.deliverHere(ticketId, text, final)
                : await this.peer(w.watcher).peer({ kind: "deliverTicketUpdate", ticketId, text, final });
          } catch {
            delivered = 1; // a watcher that could not be reached now keeps its place for the next change
          }
        }
        if (delivered === 0 || final) {
          this.sql.exec(
            "DELETE FROM ticket_watchers WHERE ticket_id = ? AND watcher = ? AND generation = ?",
            ticketId,
            w.watcher,
            w.generation,
          );
          this.anyWatcher = undefined;
        }
      }
      if (final) this.sql.exec("DELETE FROM ticket_pushes WHERE ticket_id = ?", ticketId);
    }
  }

  private async data(view: TicketView): Promise<VisitorTicketData> {
    const name = this.sql.exec<{ name: string | null }>("SELECT name FROM widget WHERE id = 1").one().name;
    const stored = this.sql.exec<{ language: string | null }>("SELECT language FROM tickets WHERE id = ?", view.id).toArray()[0];
    const language = isLanguage(stored?.language) ? stored.language : null;
    const called = view.status === "called" || view.status === "serving";
    return {
      ticketId: view.id,
      queueId: view.queueId,
      queueName: name ?? "",
      displayCode: view.displayCode,
      status: view.status,
      position: view.position,
      estimatedWaitMinutes: view.estimatedWaitMinutes,
      estimatedWaitRange: view.estimatedWaitRange,
      counter: called ? view.counter : null,
      calledAt: isoOrNull(view.calledAt),
      deferredUntil: isoOrNull(view.deferredUntil),
      deferCount: view.deferCount,
      kind: view.kind,
      appointmentAt: isoOrNull(view.appointmentAt),
      placement: view.placement === null ? null : { ...view.placement, since: iso(view.placement.since) },
      leg: view.leg,
      routedToId: view.status === "served" ? view.routedToId : null,
      language,
    };
  }
}

/** What a push depends on: a ticket whose fingerprint did not move is not pushed again. */
function fingerprint(view: TicketView): string {
  return JSON.stringify([
    view.status,
    view.position,
    view.estimatedWaitMinutes,
    view.counter,
    view.calledAt,
    view.placement?.rule ?? null,
    view.deferredUntil,
  ]);
}
