-- A desk's queue weights (docs/desks.md, the calling rule): queue id → 1..10, a queue not
-- listed weighs 1, so existing desks keep the unweighted rule.
ALTER TABLE `desks` ADD `queue_weights` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
-- The latest call's counter label, desk and recalls in the tickets projection, so a ticket
-- the room archived still tells where it was called and how often it was announced again.
ALTER TABLE `tickets` ADD `counter` text;--> statement-breakpoint
ALTER TABLE `tickets` ADD `desk_id` text;--> statement-breakpoint
ALTER TABLE `tickets` ADD `recall_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `tickets` ADD `recalled_at` integer;
