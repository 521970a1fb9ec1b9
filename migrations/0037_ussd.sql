CREATE TABLE `ussd_codes` (
	`organization_id` text PRIMARY KEY NOT NULL,
	`service_code` text NOT NULL,
	`secret_hash` text NOT NULL,
	`allowed_addresses` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ussd_codes_service_code_unique` ON `ussd_codes` (`service_code`);--> statement-breakpoint
ALTER TABLE `queues` ADD `sms_keyword` text;--> statement-breakpoint
CREATE UNIQUE INDEX `queues_org_sms_keyword_unique` ON `queues` (`organization_id`,`sms_keyword`);