ALTER TABLE `queues` ADD `blend_policy` text;--> statement-breakpoint
ALTER TABLE `tickets` ADD `kind` text DEFAULT 'walk_in' NOT NULL;--> statement-breakpoint
ALTER TABLE `tickets` ADD `appointment_at` integer;