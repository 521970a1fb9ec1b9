-- SMS pumping (issue 26): an organization's SMS policy (every column null = the documented
-- default, docs/limits.md) and the exact daily counters of its caps, each taken with a
-- conditional upsert (`used < limit`). `scope` is phone | address | widget_key | ticket | day |
-- alert; `subject` the number, address, key id or ticket id ('org' for the day's total);
-- `day` the UTC date (or '-' for a ticket's lifetime).
CREATE TABLE `sms_policies` (
	`organization_id` text PRIMARY KEY NOT NULL,
	`allowed_countries` text,
	`per_phone_per_day` integer,
	`per_address_per_day` integer,
	`per_widget_key_per_day` integer,
	`per_ticket` integer,
	`daily_ceiling` integer,
	`business_reserve_percent` integer,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `sms_counters` (
	`organization_id` text NOT NULL,
	`scope` text NOT NULL,
	`subject` text NOT NULL,
	`day` text NOT NULL,
	`used` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`organization_id`, `scope`, `subject`, `day`),
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
