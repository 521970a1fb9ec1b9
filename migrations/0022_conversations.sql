-- Customers answer back (issue 30, docs/conversations.md).
-- The tickets projection keeps the phone the customer gave at the join (bare digits after "+"),
-- so an inbound SMS finds the sender's newest live ticket with one indexed read.
ALTER TABLE `tickets` ADD `phone` text;
--> statement-breakpoint
CREATE INDEX `tickets_phone_created_idx` ON `tickets` (`phone`, `created_at`) WHERE `phone` IS NOT NULL;
--> statement-breakpoint
-- A conversation on a ticket, both ways: what the customer sent (direction `in`) and what the
-- staff or the keyword replies sent (`out`). An outbound message points at its delivery row
-- (`delivery_event_id` = notification_deliveries.event_id), whose status it shows.
CREATE TABLE `ticket_messages` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`ticket_id` text NOT NULL,
	`queue_id` text NOT NULL,
	`direction` text NOT NULL,
	`channel` text NOT NULL,
	`phone` text NOT NULL,
	`body` text NOT NULL,
	`keyword` text,
	`author_id` text,
	`delivery_event_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `ticket_messages_ticket_idx` ON `ticket_messages` (`ticket_id`, `created_at`);
--> statement-breakpoint
-- STOP: a number that asked an organization to stop every message (SMS, WhatsApp, push of its
-- tickets). START deletes the row.
CREATE TABLE `opt_outs` (
	`organization_id` text NOT NULL,
	`phone` text NOT NULL,
	`channel` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`organization_id`, `phone`),
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
