ALTER TABLE `api_keys` ADD `allowed_origins` text;
--> statement-breakpoint
CREATE TABLE `verification_tokens` (
	`organization_id` text PRIMARY KEY NOT NULL,
	`token` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `verified_domains` (
	`organization_id` text NOT NULL,
	`domain` text NOT NULL,
	`status` text NOT NULL,
	`method` text NOT NULL,
	`verified_at` integer,
	`last_checked_at` integer,
	`next_check_at` integer,
	`failure_reason` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`organization_id`, `domain`),
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `verified_domains_next_check_idx` ON `verified_domains` (`next_check_at`);
--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`description` text,
	`enabled` integer DEFAULT true NOT NULL,
	`disabled_reason` text,
	`secret` text NOT NULL,
	`previous_secret` text,
	`previous_secret_expires_at` integer,
	`failing_since` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhooks_org_idx` ON `webhooks` (`organization_id`);
--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`webhook_id` text NOT NULL,
	`organization_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event_type` text NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`response_status` integer,
	`duration_ms` integer,
	`last_error` text,
	`next_attempt_at` integer,
	`lease_until` integer,
	`redelivery_of` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`completed_at` integer,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook_idx` ON `webhook_deliveries` (`webhook_id`,`created_at`);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_event_unique` ON `webhook_deliveries` (`webhook_id`,`event_id`) WHERE redelivery_of IS NULL;
