-- Audit log (issue 31, docs/security.md): one row per change made by a person or a key.
-- Entries are written in the same batch as the change (so one exists iff the change happened)
-- with `seq`, `prev_hash` and `hash` still null; sealing then gives each, in one conditional
-- update, the next number of its organization's chain and the hash of the entry before it.
-- The unique index on (organization_id, seq) makes two sealers at once safe: the second one's
-- batch fails and it reads the chain again. NULL seqs (entries not sealed yet) never clash.
CREATE TABLE `audit_events` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`seq` integer,
	`actor_type` text NOT NULL,
	`actor_id` text,
	`entity_type` text NOT NULL,
	`entity_id` text NOT NULL,
	`action` text NOT NULL,
	`changes` text DEFAULT '{}' NOT NULL,
	`ip` text,
	`request_id` text,
	`created_at` integer NOT NULL,
	`prev_hash` text,
	`hash` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `audit_events_chain_idx` ON `audit_events` (`organization_id`,`seq`);
--> statement-breakpoint
CREATE INDEX `audit_events_org_time_idx` ON `audit_events` (`organization_id`,`created_at`);
--> statement-breakpoint
CREATE INDEX `audit_events_entity_idx` ON `audit_events` (`organization_id`,`entity_type`,`entity_id`);
--> statement-breakpoint
-- Where an organization's chain starts after entries were deleted by retention: the last
-- deleted entry's number and hash, so a deletion by anyone else is still detected.
CREATE TABLE `audit_chain_anchors` (
	`organization_id` text PRIMARY KEY NOT NULL,
	`seq` integer NOT NULL,
	`hash` text NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
-- The minute sweep's reads: entries past a retention limit, and entries not sealed yet.
CREATE INDEX `audit_events_created_idx` ON `audit_events` (`created_at`,`organization_id`);
--> statement-breakpoint
CREATE INDEX `audit_events_unsealed_idx` ON `audit_events` (`organization_id`) WHERE seq IS NULL;
