CREATE TABLE `inbound_receipts` (
	`provider` text NOT NULL,
	`message_id` text NOT NULL,
	`received_at` integer NOT NULL,
	PRIMARY KEY(`provider`, `message_id`)
);
--> statement-breakpoint
CREATE INDEX `inbound_receipts_received_idx` ON `inbound_receipts` (`received_at`);--> statement-breakpoint
CREATE TABLE `inbound_threads` (
	`phone` text NOT NULL,
	`to_number` text NOT NULL,
	`ticket_id` text,
	`menu` text,
	`pending_body` text,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`phone`, `to_number`)
);
--> statement-breakpoint
CREATE INDEX `inbound_threads_updated_idx` ON `inbound_threads` (`updated_at`);--> statement-breakpoint
CREATE TABLE `sms_senders` (
	`number` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sms_senders_org_idx` ON `sms_senders` (`organization_id`);