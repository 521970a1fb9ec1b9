CREATE TABLE `calendar_events` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`start_at` integer NOT NULL,
	`end_at` integer NOT NULL,
	`event_type` text NOT NULL,
	`service_id` text,
	`location_id` text,
	`attendees` text NOT NULL,
	`color` text,
	`recurrence_pattern` text,
	`recurrence_end_at` integer,
	`created_by_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`location_id`) REFERENCES `locations`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`created_by_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `calendar_events_org_start_idx` ON `calendar_events` (`organization_id`,`start_at`);--> statement-breakpoint
CREATE TABLE `nfc_tag_devices` (
	`tag_id` text NOT NULL,
	`device_hash` text NOT NULL,
	`first_seen_at` integer NOT NULL,
	PRIMARY KEY(`tag_id`, `device_hash`),
	FOREIGN KEY (`tag_id`) REFERENCES `nfc_tags`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `nfc_tags` (
	`id` text PRIMARY KEY NOT NULL,
	`nfc_id` text NOT NULL,
	`organization_id` text NOT NULL,
	`queue_id` text NOT NULL,
	`kind` text DEFAULT 'physical' NOT NULL,
	`location_name` text NOT NULL,
	`latitude` real NOT NULL,
	`longitude` real NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`scan_count` integer DEFAULT 0 NOT NULL,
	`last_scanned_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`queue_id`) REFERENCES `queues`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `nfc_tags_nfc_id_unique` ON `nfc_tags` (`nfc_id`);--> statement-breakpoint
CREATE INDEX `nfc_tags_org_idx` ON `nfc_tags` (`organization_id`);--> statement-breakpoint
CREATE INDEX `nfc_tags_queue_idx` ON `nfc_tags` (`queue_id`);--> statement-breakpoint
CREATE TABLE `qr_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`purpose` text NOT NULL,
	`service_id` text,
	`queue_id` text,
	`token` text NOT NULL,
	`expires_at` integer,
	`used_at` integer,
	`used_by_user_id` text,
	`created_by_id` text,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`queue_id`) REFERENCES `queues`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `qr_tokens_token_unique` ON `qr_tokens` (`token`);--> statement-breakpoint
CREATE INDEX `qr_tokens_org_created_idx` ON `qr_tokens` (`organization_id`,`created_at`);