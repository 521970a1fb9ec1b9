-- Indexes for the queries that run on every event or every minute (issue 25), each checked
-- with the query planner in test/integration/query-plans.test.ts.
--
-- fanOutEvent reads back the deliveries it just wrote for one event: without this index that
-- read scanned every delivery of every organization, on every event.
CREATE INDEX `webhook_deliveries_event_idx` ON `webhook_deliveries` (`event_id`);
--> statement-breakpoint
-- The minute sweep purges remote-join expiries older than the penalty look-back: the only
-- index led with user_id, so the purge walked the whole table.
CREATE INDEX `remote_join_expiries_expired_idx` ON `remote_join_expiries` (`expired_at`);
--> statement-breakpoint
-- The minute sweep's appointment reminders read appointments starting before a horizon: the
-- only index led with organization_id, so every calendar event (shifts, closures) was read.
CREATE INDEX `calendar_events_type_start_idx` ON `calendar_events` (`event_type`,`start_at`);
