-- Notifications (issue 14): devices, in-app notifications, one delivery row per
-- (event, channel, recipient), and widget visitors' web push subscriptions.
CREATE TABLE `push_devices` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`platform` text NOT NULL,
	`token` text NOT NULL,
	`device_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `push_devices_token_unique` ON `push_devices` (`token`);--> statement-breakpoint
CREATE INDEX `push_devices_user_idx` ON `push_devices` (`user_id`);--> statement-breakpoint
CREATE TABLE `notifications` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`organization_id` text,
	`type` text NOT NULL,
	`title` text NOT NULL,
	`body` text NOT NULL,
	`data` text NOT NULL,
	`read_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `notifications_user_created_idx` ON `notifications` (`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `notification_deliveries` (
	`key` text PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`event_id` text NOT NULL,
	`organization_id` text,
	`type` text NOT NULL,
	`channel` text NOT NULL,
	`recipient` text NOT NULL,
	`provider` text,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`payload` text NOT NULL,
	`provider_response` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notification_deliveries_id_unique` ON `notification_deliveries` (`id`);--> statement-breakpoint
CREATE INDEX `notification_deliveries_org_status_idx` ON `notification_deliveries` (`organization_id`,`status`,`created_at`);--> statement-breakpoint
CREATE TABLE `visitor_push_subscriptions` (
	`ticket_id` text NOT NULL,
	`endpoint` text NOT NULL,
	`organization_id` text NOT NULL,
	`p256dh` text NOT NULL,
	`auth` text NOT NULL,
	`language` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`ticket_id`, `endpoint`),
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `appointment_reminders` (
	`event_id` text NOT NULL,
	`occurrence_start` integer NOT NULL,
	`sent_at` integer NOT NULL,
	PRIMARY KEY(`event_id`, `occurrence_start`),
	FOREIGN KEY (`event_id`) REFERENCES `calendar_events`(`id`) ON UPDATE no action ON DELETE cascade
);
