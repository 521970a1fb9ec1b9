-- The organization's event stream (issue #32): every domain event, kept 24 h, so an integrator
-- behind a NAT catches up by listing (GET /v1/events?startingAfter=evt_…) instead of needing a
-- public webhook URL. `seq` is the order events were recorded in: AUTOINCREMENT never reuses a
-- value, so a reader resuming after an event never misses one recorded later.
CREATE TABLE `organization_events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`organization_id` text NOT NULL,
	`type` text NOT NULL,
	`queue_id` text,
	`payload` text NOT NULL,
	`recorded_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `organization_events_id_unique` ON `organization_events` (`id`);
--> statement-breakpoint
CREATE INDEX `organization_events_org_seq_idx` ON `organization_events` (`organization_id`,`seq`);
--> statement-breakpoint
CREATE INDEX `organization_events_recorded_idx` ON `organization_events` (`recorded_at`);
--> statement-breakpoint
-- Dated API versions (issue #32, docs/changelog.md): a key answers in the version that was
-- current when it was created, unless a request names another in `Queue-Version`. Keys made
-- before versions existed (NULL) answer in the first one, 2026-11-01.
ALTER TABLE `api_keys` ADD `api_version` text;
