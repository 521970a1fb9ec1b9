-- Desks (counters): where an operator sits for a shift and the queues they call from
-- (docs/desks.md). One operator per desk is the row's operator_id; one desk per operator is
-- the partial unique index, so two concurrent opens can never both win.
CREATE TABLE `desks` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`location_id` text NOT NULL,
	`name` text NOT NULL,
	`display_name` text,
	`queue_ids` text NOT NULL,
	`operator_id` text,
	`opened_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`location_id`) REFERENCES `locations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `desks_location_idx` ON `desks` (`location_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `desks_operator_unique` ON `desks` (`operator_id`) WHERE "desks"."operator_id" is not null;
