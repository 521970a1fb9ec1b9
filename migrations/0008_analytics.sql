-- Analytics (issue 20): each ticket keeps the first wait estimate its join answered; the
-- outbox drain keeps one aggregate row per queue per UTC hour, and each ticket's counted
-- facts (so an update replaces what the ticket counted for, once, whatever is replayed).
ALTER TABLE `tickets` ADD `first_estimate_minutes` real;
--> statement-breakpoint
CREATE TABLE `analytics_ticket_facts` (
	`ticket_id` text PRIMARY KEY NOT NULL,
	`queue_id` text NOT NULL,
	`organization_id` text NOT NULL,
	`hour_start` integer NOT NULL,
	`channel` text NOT NULL,
	`served` integer NOT NULL,
	`no_show` integer NOT NULL,
	`cancelled` integer NOT NULL,
	`transferred` integer NOT NULL,
	`wait_ms` integer,
	`wait_bucket` integer,
	`service_ms` integer,
	`service_bucket` integer,
	`estimate_error_ms` integer,
	`estimate_error_bucket` integer,
	`estimate_bias_ms` integer,
	`version` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `analytics_ticket_facts_queue_hour_idx` ON `analytics_ticket_facts` (`queue_id`,`hour_start`);
--> statement-breakpoint
CREATE TABLE `analytics_hourly` (
	`queue_id` text NOT NULL,
	`hour_start` integer NOT NULL,
	`organization_id` text NOT NULL,
	`created` integer DEFAULT 0 NOT NULL,
	`served` integer DEFAULT 0 NOT NULL,
	`no_show` integer DEFAULT 0 NOT NULL,
	`cancelled` integer DEFAULT 0 NOT NULL,
	`transferred` integer DEFAULT 0 NOT NULL,
	`waited` integer DEFAULT 0 NOT NULL,
	`wait_ms` integer DEFAULT 0 NOT NULL,
	`wait_hist` text DEFAULT '{}' NOT NULL,
	`serviced` integer DEFAULT 0 NOT NULL,
	`service_ms` integer DEFAULT 0 NOT NULL,
	`service_hist` text DEFAULT '{}' NOT NULL,
	`estimated` integer DEFAULT 0 NOT NULL,
	`estimate_error_ms` integer DEFAULT 0 NOT NULL,
	`estimate_bias_ms` integer DEFAULT 0 NOT NULL,
	`estimate_error_hist` text DEFAULT '{}' NOT NULL,
	`channels` text DEFAULT '{}' NOT NULL,
	PRIMARY KEY(`queue_id`, `hour_start`),
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `analytics_hourly_org_idx` ON `analytics_hourly` (`organization_id`);
