CREATE TABLE `entry_scans` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`organization_id` text NOT NULL,
	`channel` text NOT NULL,
	`source_id` text NOT NULL,
	`service_id` text,
	`queue_id` text,
	`phone_model` text,
	`os_version` text,
	`scanned_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `entry_scans_user_at_idx` ON `entry_scans` (`user_id`,`scanned_at`);--> statement-breakpoint
CREATE TABLE `remote_join_expiries` (
	`ticket_id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`organization_id` text NOT NULL,
	`queue_id` text NOT NULL,
	`expired_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `remote_join_expiries_user_at_idx` ON `remote_join_expiries` (`user_id`,`expired_at`);