import { migrateStorage } from "../lib/storage-migrations";

// The OrganizationLedger's own SQLite schema: numbered steps, run once each when the object
// starts, like the room's (src/queue-room/schema.ts). Append a step; never edit one that shipped.

export const LEDGER_MIGRATIONS: readonly string[] = [
  // The first step keeps IF NOT EXISTS: ledgers started before the steps existed already have
  // these tables (and their counts), and only gain the step counter.
  `CREATE TABLE IF NOT EXISTS ledger_meta (id INTEGER PRIMARY KEY CHECK (id = 1), organization_id TEXT NOT NULL);
   CREATE TABLE IF NOT EXISTS ticket_periods (period TEXT PRIMARY KEY, used INTEGER NOT NULL, flushed INTEGER NOT NULL);`,
  // Issue 43: the last report each room made of the joins it counted itself (an unlimited plan),
  // so a report sent again after a failure is applied once.
  `CREATE TABLE IF NOT EXISTS room_reports (room TEXT PRIMARY KEY, seq INTEGER NOT NULL);`,
];

export function migrateLedger(storage: DurableObjectStorage, steps: readonly string[] = LEDGER_MIGRATIONS): void {
  migrateStorage(storage, "ledger_schema", steps);
}
