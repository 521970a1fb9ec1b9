CREATE TABLE `audit_checkpoints` (
	`organization_id` text NOT NULL,
	`seq` integer NOT NULL,
	`hash` text NOT NULL,
	`key_id` text NOT NULL,
	`signature` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`organization_id`, `seq`)
);
--> statement-breakpoint
ALTER TABLE `audit_events` ADD `key_id` text;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `include_personal_data` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `api_version` text;