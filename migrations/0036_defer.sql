ALTER TABLE `queues` ADD `max_defer_minutes` integer DEFAULT 60 NOT NULL;--> statement-breakpoint
ALTER TABLE `queues` ADD `max_defers` integer DEFAULT 2 NOT NULL;--> statement-breakpoint
ALTER TABLE `tickets` ADD `deferred_until` integer;--> statement-breakpoint
ALTER TABLE `tickets` ADD `defer_count` integer DEFAULT 0 NOT NULL;