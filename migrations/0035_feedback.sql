CREATE TABLE `ticket_feedback` (
	`ticket_id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`queue_id` text NOT NULL,
	`service_id` text NOT NULL,
	`desk_id` text,
	`operator_id` text,
	`score` integer NOT NULL,
	`comment` text,
	`channel` text NOT NULL,
	`ticket_created_at` integer NOT NULL,
	`wait_ms` integer,
	`served_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `ticket_feedback_queue_created_idx` ON `ticket_feedback` (`queue_id`,`ticket_created_at`);