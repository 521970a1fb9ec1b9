CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`name` text NOT NULL,
	`lookup_prefix` text NOT NULL,
	`key_hash` text NOT NULL,
	`last4` text NOT NULL,
	`permissions` text NOT NULL,
	`created_by_id` text,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	`revoked_at` integer,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_lookup_unique` ON `api_keys` (`lookup_prefix`);--> statement-breakpoint
CREATE INDEX `api_keys_org_idx` ON `api_keys` (`organization_id`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`scope` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`state` text NOT NULL,
	`response_status` integer,
	`response_body` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`scope`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_expires_idx` ON `idempotency_keys` (`expires_at`);--> statement-breakpoint
CREATE TABLE `locations` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`name` text NOT NULL,
	`address` text NOT NULL,
	`latitude` real NOT NULL,
	`longitude` real NOT NULL,
	`timezone` text DEFAULT 'UTC' NOT NULL,
	`phone` text,
	`email` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `locations_org_idx` ON `locations` (`organization_id`);--> statement-breakpoint
CREATE INDEX `locations_geo_idx` ON `locations` (`latitude`,`longitude`);--> statement-breakpoint
CREATE TABLE `members` (
	`organization_id` text NOT NULL,
	`user_id` text NOT NULL,
	`role` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`organization_id`, `user_id`),
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `members_user_idx` ON `members` (`user_id`);--> statement-breakpoint
CREATE TABLE `organizations` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`slug` text NOT NULL,
	`type` text DEFAULT 'other' NOT NULL,
	`description` text,
	`legal_name` text,
	`siret` text,
	`vat_number` text,
	`website` text,
	`billing_email` text,
	`availability_radius_km` real,
	`default_language` text DEFAULT 'en' NOT NULL,
	`logo_url` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `organizations_slug_unique` ON `organizations` (`slug`);--> statement-breakpoint
CREATE TABLE `queues` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`service_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`max_capacity` integer,
	`letter` text NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`archived_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `queues_org_idx` ON `queues` (`organization_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `queues_service_letter_unique` ON `queues` (`service_id`,`letter`);--> statement-breakpoint
CREATE TABLE `room_deadlines` (
	`queue_id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`due_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `room_deadlines_due_idx` ON `room_deadlines` (`due_at`);--> statement-breakpoint
CREATE TABLE `service_locations` (
	`service_id` text NOT NULL,
	`location_id` text NOT NULL,
	PRIMARY KEY(`service_id`, `location_id`),
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`location_id`) REFERENCES `locations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `service_locations_location_idx` ON `service_locations` (`location_id`);--> statement-breakpoint
CREATE TABLE `service_types` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_type` text NOT NULL,
	`name_fr` text NOT NULL,
	`name_en` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `service_types_org_type_idx` ON `service_types` (`organization_type`);--> statement-breakpoint
CREATE TABLE `services` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`service_type_id` text NOT NULL,
	`is_virtual` integer DEFAULT false NOT NULL,
	`max_remote_join_radius_km` real,
	`status` text DEFAULT 'active' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`service_type_id`) REFERENCES `service_types`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `services_org_idx` ON `services` (`organization_id`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`absolute_expires_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sessions_user_idx` ON `sessions` (`user_id`);--> statement-breakpoint
CREATE TABLE `subscriptions` (
	`organization_id` text PRIMARY KEY NOT NULL,
	`plan` text DEFAULT 'starter' NOT NULL,
	`billing_interval` text DEFAULT 'monthly' NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`currency` text DEFAULT 'EUR' NOT NULL,
	`current_period_start` integer NOT NULL,
	`current_period_end` integer NOT NULL,
	`cancel_at_period_end` integer DEFAULT false NOT NULL,
	`rate_tier_override` text,
	`custom_rate_per_minute` integer,
	`custom_rate_per_day` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `tickets` (
	`id` text PRIMARY KEY NOT NULL,
	`queue_id` text NOT NULL,
	`service_id` text NOT NULL,
	`organization_id` text NOT NULL,
	`user_id` text NOT NULL,
	`number` integer NOT NULL,
	`display_code` text NOT NULL,
	`status` text NOT NULL,
	`party_size` integer NOT NULL,
	`is_priority` integer NOT NULL,
	`is_ghost_mode` integer NOT NULL,
	`source` text NOT NULL,
	`visitor_name` text,
	`assigned_to_id` text,
	`called_at` integer,
	`serving_at` integer,
	`served_at` integer,
	`present_at` integer,
	`skip_reason` text,
	`recovered_from_id` text,
	`transferred_to_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`version` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `tickets_queue_status_idx` ON `tickets` (`queue_id`,`status`);--> statement-breakpoint
CREATE INDEX `tickets_org_created_idx` ON `tickets` (`organization_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `tickets_user_idx` ON `tickets` (`user_id`);--> statement-breakpoint
CREATE TABLE `usage_counters` (
	`organization_id` text NOT NULL,
	`period` text NOT NULL,
	`metric` text NOT NULL,
	`used` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`organization_id`, `period`, `metric`),
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`password_hash` text NOT NULL,
	`first_name` text NOT NULL,
	`last_name` text NOT NULL,
	`account_type` text NOT NULL,
	`role` text DEFAULT 'user' NOT NULL,
	`language` text DEFAULT 'en' NOT NULL,
	`sms_notifications` integer DEFAULT true NOT NULL,
	`ticket_reminders` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (`email`);