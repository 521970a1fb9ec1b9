ALTER TABLE `services` ADD `route_entry` text DEFAULT 'original_time' NOT NULL;--> statement-breakpoint
ALTER TABLE `tickets` ADD `visit_id` text;--> statement-breakpoint
ALTER TABLE `tickets` ADD `leg_index` integer;--> statement-breakpoint
ALTER TABLE `tickets` ADD `leg_count` integer;--> statement-breakpoint
CREATE INDEX `tickets_visit_idx` ON `tickets` (`visit_id`) WHERE visit_id IS NOT NULL;