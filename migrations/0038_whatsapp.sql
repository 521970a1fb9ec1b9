CREATE TABLE `ticket_channels` (
	`ticket_id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`channel` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `ticket_channels_created_idx` ON `ticket_channels` (`created_at`);--> statement-breakpoint
CREATE TABLE `whatsapp_settings` (
	`organization_id` text PRIMARY KEY NOT NULL,
	`phone_number_id` text NOT NULL,
	`phone_number` text NOT NULL,
	`joined_template` text,
	`called_template` text,
	`almost_called_template` text,
	`reminder_template` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `whatsapp_settings_phone_number_id_idx` ON `whatsapp_settings` (`phone_number_id`);--> statement-breakpoint
CREATE TABLE `whatsapp_windows` (
	`organization_id` text NOT NULL,
	`phone` text NOT NULL,
	`last_inbound_at` integer NOT NULL,
	PRIMARY KEY(`organization_id`, `phone`),
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `whatsapp_windows_last_inbound_idx` ON `whatsapp_windows` (`last_inbound_at`);