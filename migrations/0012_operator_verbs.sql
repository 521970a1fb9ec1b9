-- The operator's verbs (docs/desks.md): the outcomes a service offers at completion, and the
-- ticket projection's outcome, note, hold and step-back columns (the room is the authority;
-- the outbox projects them).
CREATE TABLE `service_outcomes` (
	`service_id` text NOT NULL,
	`organization_id` text NOT NULL,
	`code` text NOT NULL,
	`label` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`service_id`, `code`),
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `tickets` ADD `outcome` text;--> statement-breakpoint
ALTER TABLE `tickets` ADD `note` text;--> statement-breakpoint
ALTER TABLE `tickets` ADD `held_at` integer;--> statement-breakpoint
ALTER TABLE `tickets` ADD `stepped_back_places` integer;
