import type { Result } from "../lib/result";
import type { QueueFacts, RoomError } from "./types";

// What the room needs from outside and is given (src/room-host.ts wires the real ones): the
// room depends on these shapes, never on the Worker's services or its HTTP layer.

/** The organization's monthly ticket ledger (src/ledger/): a join takes a unit, a refused join gives it back. */
export interface QuotaLedger {
  take(organizationId: string, at: number, limit: number | null): Promise<Result<{ period: string }, RoomError>>;
  refund(organizationId: string, period: string): Promise<void>;
  /** The joins this room counted itself under an unlimited plan (quota-tally.ts), report `seq` of `room`. */
  record(organizationId: string, room: string, seq: number, counts: TalliedJoins[]): Promise<void>;
}

/** A room's count of the joins of one month (YYYY-MM) not reported to the ledger yet. */
export interface TalliedJoins {
  period: string;
  joins: number;
}

/** The catalog (D1's queues): a socket subscribing to another queue, or a visitor's ticket, needs its facts. */
export interface Catalog {
  queueFacts(queueId: string): Promise<QueueFacts | null>;
}

export interface RoomPorts {
  ledger: QuotaLedger;
  catalog: Catalog;
}
