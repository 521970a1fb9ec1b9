-- Analytics of tickets older than the aggregates (issue 20): every organization that already
-- has tickets is listed once; the minute sweep counts a page of its tickets per run through
-- the drain's own version-guarded statements (src/jobs/analytics-backfill.ts) and deletes the
-- row when the last page is done. Organizations created later have no row: their tickets are
-- counted by the drain as they change.
CREATE TABLE `analytics_backfill` (
	`organization_id` text PRIMARY KEY NOT NULL,
	`after_created_at` integer DEFAULT -1 NOT NULL,
	`after_id` text DEFAULT '' NOT NULL,
	`tickets` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `analytics_backfill` (`organization_id`)
SELECT `o`.`id` FROM `organizations` AS `o` WHERE EXISTS (SELECT 1 FROM `tickets` AS `t` WHERE `t`.`organization_id` = `o`.`id`);
