import { migrateStorage } from "../lib/storage-migrations";

// The QueueRoom's own SQLite schema. Migrations run in order, once each, when the object
// starts; the applied count is kept in `room_schema` so a new step only runs where missing.

export const ROOM_MIGRATIONS: readonly string[] = [
  `CREATE TABLE room (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     queue_id TEXT,
     organization_id TEXT,
     service_id TEXT,
     letter TEXT,
     max_capacity INTEGER,
     status TEXT NOT NULL DEFAULT 'active',
     archived_at INTEGER,
     retired_at INTEGER,
     no_show_ms INTEGER NOT NULL DEFAULT 300000,
     next_number INTEGER NOT NULL DEFAULT 1,
     priority_seq INTEGER NOT NULL DEFAULT 0,
     version INTEGER NOT NULL DEFAULT 0
   );
   INSERT INTO room (id) VALUES (1);
   CREATE TABLE tickets (
     id TEXT PRIMARY KEY,
     number INTEGER NOT NULL UNIQUE,
     lane INTEGER NOT NULL,
     order_key INTEGER NOT NULL,
     status TEXT NOT NULL,
     user_id TEXT NOT NULL,
     party_size INTEGER NOT NULL,
     is_priority INTEGER NOT NULL,
     is_ghost_mode INTEGER NOT NULL,
     source TEXT NOT NULL,
     visitor_name TEXT,
     phone TEXT,
     language TEXT,
     assigned_to_id TEXT,
     called_at INTEGER,
     serving_at INTEGER,
     served_at INTEGER,
     present_at INTEGER,
     skip_reason TEXT,
     recovered_from_id TEXT UNIQUE,
     transferred_to_id TEXT,
     transferring_to TEXT,
     almost_called_sent INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     version INTEGER NOT NULL
   );
   CREATE INDEX tickets_status_order ON tickets (status, lane, order_key);
   CREATE TABLE admissions (
     source_ticket_id TEXT PRIMARY KEY,
     ticket_id TEXT
   );
   CREATE TABLE calls (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     at INTEGER NOT NULL,
     operator_id TEXT NOT NULL
   );
   CREATE TABLE outbox (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     ticket_id TEXT,
     message TEXT NOT NULL
   );`,
  // Widget: the queue's display name (learnt from D1 when a socket subscribes) and the rooms
  // that relay this queue's updates to sockets of theirs (see sockets.ts).
  `CREATE TABLE widget (id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT);
   INSERT INTO widget (id) VALUES (1);
   CREATE TABLE widget_watchers (queue_id TEXT PRIMARY KEY, generation INTEGER NOT NULL);`,
  // Entry channels: a remote join lives beside its ticket; the user index finds a scanner's ticket.
  `CREATE TABLE remote_joins (
     ticket_id TEXT PRIMARY KEY,
     id TEXT NOT NULL,
     status TEXT NOT NULL,
     geofence_radius_m INTEGER NOT NULL,
     latitude REAL,
     longitude REAL,
     accuracy_m REAL,
     distance_m REAL,
     last_location_at INTEGER NOT NULL,
     warned_at INTEGER,
     reached_front_at INTEGER,
     arrived_at INTEGER,
     confirm_method TEXT,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );
   CREATE INDEX remote_joins_status ON remote_joins (status);
   CREATE INDEX tickets_user_status ON tickets (user_id, status);`,
  // When a ticket's hand-off to another queue began: the alarm settles one left open.
  // Hand-offs already open when this step runs count as old, so the next alarm settles them.
  `ALTER TABLE tickets ADD COLUMN transferring_since INTEGER;
   UPDATE tickets SET transferring_since = 0 WHERE transferring_to IS NOT NULL;`,
  // The start of the current long-wait episode, so queue.long_wait is sent once per episode.
  `ALTER TABLE room ADD COLUMN long_wait_at INTEGER;`,
  // Each hand-off has its own id, and the target's admissions (and tombstones) are keyed by
  // it, so settling one hand-off never bars a later transfer of the same ticket. A hand-off
  // open when this step runs keeps its ticket id as its id, which is how the target already
  // knows it; tombstones of settled ones, keyed by a ticket id, match no new hand-off.
  `ALTER TABLE tickets ADD COLUMN hand_off_id TEXT;
   UPDATE tickets SET hand_off_id = id WHERE transferring_to IS NOT NULL;
   ALTER TABLE admissions RENAME COLUMN source_ticket_id TO hand_off_id;`,
  // Analytics: the wait the join answered, kept with the ticket (projected to D1) so the
  // accuracy of estimates can be measured once the ticket is called.
  `ALTER TABLE tickets ADD COLUMN first_estimate_minutes REAL;`,
  // Retention (archive.ts): finished tickets are found by their last change, and a ticket an
  // outbox row still names is kept, both through an index so the archive step stays cheap.
  `CREATE INDEX tickets_status_updated ON tickets (status, updated_at);
   CREATE INDEX outbox_ticket ON outbox (ticket_id);`,
  // The visitor's ticket (followers.ts): the SHA-256 of each live ticket's token (never the
  // token), the rooms whose sockets follow a ticket with the last update sent; and, in a socket hub (a room that only holds spec-flow sockets),
  // the hub's name.
  `CREATE TABLE ticket_tokens (ticket_id TEXT PRIMARY KEY, hash TEXT NOT NULL);
   CREATE TABLE ticket_watchers (
     ticket_id TEXT NOT NULL,
     watcher TEXT NOT NULL,
     generation INTEGER NOT NULL,
     PRIMARY KEY (ticket_id, watcher)
   );
   CREATE TABLE ticket_pushes (ticket_id TEXT PRIMARY KEY, text TEXT NOT NULL);
   ALTER TABLE widget ADD COLUMN hub TEXT;`,
  // The queue's minutes per service before there is call history (wait-estimate.ts), and the
  // counter label each call was made with, which the display board shows.
  `ALTER TABLE room ADD COLUMN default_service_minutes INTEGER NOT NULL DEFAULT 5;
   ALTER TABLE tickets ADD COLUMN counter TEXT;`,
  // Desks (docs/desks.md): the desk a ticket was called at, when the ticket took its place in
  // its lane (the join, or the restore that put it back), which a desk compares across queues,
  // and the recalls of a called ticket.
  `ALTER TABLE tickets ADD COLUMN desk_id TEXT;
   ALTER TABLE tickets ADD COLUMN lined_up_at INTEGER;
   UPDATE tickets SET lined_up_at = created_at;
   ALTER TABLE tickets ADD COLUMN recall_count INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE tickets ADD COLUMN recalled_at INTEGER;`,
  // The operator's verbs (docs/desks.md): a held ticket (when, why, and the state it goes back
  // to on resume), the outcome and note of a completion, and the owner's one step back.
  `ALTER TABLE tickets ADD COLUMN held_at INTEGER;
   ALTER TABLE tickets ADD COLUMN held_from TEXT;
   ALTER TABLE tickets ADD COLUMN hold_reason TEXT;
   ALTER TABLE tickets ADD COLUMN outcome TEXT;
   ALTER TABLE tickets ADD COLUMN note TEXT;
   ALTER TABLE tickets ADD COLUMN stepped_back_places INTEGER;`,
  // The rules a join and a call-next check (rules.ts, docs/room-rules.md): a versioned copy of
  // the service's status and plan limit, valid over [valid_from, valid_until), and the
  // occurrences of closures and breaks over that window, expanded by the Worker.
  `CREATE TABLE room_rules (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     version INTEGER NOT NULL,
     valid_from INTEGER NOT NULL,
     valid_until INTEGER NOT NULL,
     service_status TEXT NOT NULL,
     tickets_per_month INTEGER
   );
   CREATE TABLE room_blocks (
     seq INTEGER NOT NULL,
     closes_service INTEGER NOT NULL,
     user_id TEXT,
     event_id TEXT NOT NULL,
     start_at INTEGER NOT NULL,
     end_at INTEGER NOT NULL
   );
   CREATE INDEX room_blocks_end ON room_blocks (end_at);`,
  // The line's counters (store.ts lineCounts): tickets and people per live status and lane,
  // kept by triggers on every write of a ticket, so a join, a position, the capacity check and
  // the widget's waiting count read a few rows instead of counting the whole line.
  `CREATE TABLE line_counts (
     status TEXT NOT NULL,
     lane INTEGER NOT NULL,
     tickets INTEGER NOT NULL,
     people INTEGER NOT NULL,
     PRIMARY KEY (status, lane)
   );
   INSERT INTO line_counts (status, lane, tickets, people)
     SELECT status, lane, COUNT(*), SUM(party_size) FROM tickets WHERE status IN ('waiting', 'called', 'serving') GROUP BY status, lane;
   CREATE TRIGGER line_counts_insert AFTER INSERT ON tickets WHEN NEW.status IN ('waiting', 'called', 'serving') BEGIN
     INSERT INTO line_counts (status, lane, tickets, people) VALUES (NEW.status, NEW.lane, 1, NEW.party_size)
       ON CONFLICT (status, lane) DO UPDATE SET tickets = tickets + 1, people = people + excluded.people;
   END;
   CREATE TRIGGER line_counts_delete AFTER DELETE ON tickets WHEN OLD.status IN ('waiting', 'called', 'serving') BEGIN
     UPDATE line_counts SET tickets = tickets - 1, people = people - OLD.party_size WHERE status = OLD.status AND lane = OLD.lane;
   END;
   CREATE TRIGGER line_counts_update AFTER UPDATE OF status, lane, party_size ON tickets
   WHEN OLD.status IS NOT NEW.status OR OLD.lane IS NOT NEW.lane OR OLD.party_size IS NOT NEW.party_size BEGIN
     UPDATE line_counts SET tickets = tickets - 1, people = people - OLD.party_size
       WHERE status = OLD.status AND lane = OLD.lane AND OLD.status IN ('waiting', 'called', 'serving');
     INSERT INTO line_counts (status, lane, tickets, people)
       SELECT NEW.status, NEW.lane, 1, NEW.party_size WHERE NEW.status IN ('waiting', 'called', 'serving')
       ON CONFLICT (status, lane) DO UPDATE SET tickets = tickets + 1, people = people + excluded.people;
   END;`,
  // Visits (docs/visits.md): the intake answers, JSON, on the ticket they describe: the open
  // ones and the personal ones (never in webhooks, erased by retention in D1).
  // And staff's labels, a JSON array.
  `ALTER TABLE tickets ADD COLUMN intake TEXT;
   ALTER TABLE tickets ADD COLUMN intake_personal TEXT;
   ALTER TABLE tickets ADD COLUMN labels TEXT;`,
  // Appointments blended with walk-ins (docs/blend.md): a ticket's kind, the appointment it
  // checks in (one ticket per appointment, whatever the concurrency), its time and whether it
  // came late; and the queue's blend policy in the room's copy of the rules.
  `ALTER TABLE tickets ADD COLUMN kind TEXT NOT NULL DEFAULT 'walk_in';
   ALTER TABLE tickets ADD COLUMN appointment_id TEXT;
   ALTER TABLE tickets ADD COLUMN appointment_at INTEGER;
   ALTER TABLE tickets ADD COLUMN appointment_late INTEGER NOT NULL DEFAULT 0;
   CREATE UNIQUE INDEX tickets_appointment ON tickets (appointment_id) WHERE appointment_id IS NOT NULL;
   CREATE INDEX tickets_status_kind ON tickets (status, kind);
   ALTER TABLE room_rules ADD COLUMN blend TEXT;`,
  // The customer's verdict (docs/visits.md, feedback): a served ticket's token outlives the
  // ticket for the feedback window (followers.ts), kept apart from the live tokens.
  `CREATE TABLE verdict_tokens (ticket_id TEXT PRIMARY KEY, hash TEXT NOT NULL, served_at INTEGER NOT NULL);
   CREATE INDEX verdict_tokens_served ON verdict_tokens (served_at);`,
  // A later turn on request (docs/visits.md, defer): not called before `deferred_until`, and how
  // many times the ticket was deferred (the queue's maxDefers bounds it).
  `ALTER TABLE tickets ADD COLUMN deferred_until INTEGER;
   ALTER TABLE tickets ADD COLUMN defer_count INTEGER NOT NULL DEFAULT 0;`,
  // Several services in one visit (docs/visits.md): the route (JSON legs), this leg, the visit's
  // first ticket, its start and its display code (kept from the first leg), the legs before and
  // after, and the visitor's token hash carried while the next leg is being handed over.
  `ALTER TABLE tickets ADD COLUMN route TEXT;
   ALTER TABLE tickets ADD COLUMN leg_index INTEGER;
   ALTER TABLE tickets ADD COLUMN visit_id TEXT;
   ALTER TABLE tickets ADD COLUMN visit_started_at INTEGER;
   ALTER TABLE tickets ADD COLUMN visit_code TEXT;
   ALTER TABLE tickets ADD COLUMN routed_from_id TEXT;
   ALTER TABLE tickets ADD COLUMN routed_to_id TEXT;
   ALTER TABLE tickets ADD COLUMN route_token_hash TEXT;`,
  // Issue 43: every call-next reads the caller's latest call still open (commands.ts
  // settlePreviousCalls), which scanned every called ticket and sorted them: an operator who
  // calls without settling leaves one behind at each call. Only called tickets are in it, in the
  // order the read wants, so a join's insert does not maintain it.
  `CREATE INDEX tickets_called_by ON tickets (assigned_to_id, called_at DESC, lane, order_key) WHERE status = 'called';`,
  // Issue 43: only appointments are looked up by kind (store.ts, whether one waits and when each
  // opens): an index of appointments alone is not written by a walk-in's join or by its calls.
  `DROP INDEX tickets_status_kind;
   CREATE INDEX tickets_appointments ON tickets (status) WHERE kind = 'appointment';`,
  // Issue 43: the joins the room counted itself under an unlimited plan (quota-tally.ts), by
  // month, and the numbered report being sent to the organization's ledger.
  `CREATE TABLE quota_tally (period TEXT PRIMARY KEY, joins INTEGER NOT NULL);
   CREATE TABLE quota_report (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, counts TEXT);
   INSERT INTO quota_report (id, seq) VALUES (1, 0);`,
  // Issue 43: the next hand-off deadline (hand-offs.ts), read after every drain and every change
  // without an event, scanned every ticket the room holds (0.7 ms at 10,000). Only tickets being
  // moved are in it: no other write maintains it.
  `CREATE INDEX tickets_transferring ON tickets (transferring_since) WHERE transferring_to IS NOT NULL;`,
  // Issue 43: only finished tickets are looked up by their last change (archive.ts, whose reads
  // name this index): a live ticket's every write changes `updated_at`, and no longer maintains
  // an index for it. The statuses are archive.ts FINISHED_STATUSES. And the first open call (the
  // no-show deadline every drain reports) is one probe, not a read of every called ticket.
  `DROP INDEX tickets_status_updated;
   CREATE INDEX tickets_finished ON tickets (updated_at) WHERE status IN ('served', 'cancelled', 'expired', 'skipped');
   CREATE INDEX tickets_called_at ON tickets (called_at) WHERE status = 'called';`,
];

/** Runs the steps this room has not applied yet (src/lib/storage-migrations.ts). */
export function migrateRoom(storage: DurableObjectStorage, steps: readonly string[] = ROOM_MIGRATIONS): void {
  migrateStorage(storage, "room_schema", steps);
}
