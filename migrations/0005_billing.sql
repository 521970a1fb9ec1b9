-- Billing: the provider side of a subscription, checkouts, invoices and applied provider events.
ALTER TABLE `subscriptions` ADD `provider` text;
--> statement-breakpoint
ALTER TABLE `subscriptions` ADD `provider_subscription_id` text;
--> statement-breakpoint
ALTER TABLE `subscriptions` ADD `scheduled_plan` text;
--> statement-breakpoint
ALTER TABLE `subscriptions` ADD `grace_until` integer;
--> statement-breakpoint
ALTER TABLE `subscriptions` ADD `last_event_at` integer;
--> statement-breakpoint
ALTER TABLE `subscriptions` ADD `cancel_reason` text;
--> statement-breakpoint
ALTER TABLE `subscriptions` ADD `sandbox_renewals_fail` integer DEFAULT false NOT NULL;
--> statement-breakpoint
CREATE INDEX `subscriptions_period_end_idx` ON `subscriptions` (`current_period_end`);
--> statement-breakpoint
CREATE TABLE `billing_checkouts` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`provider` text NOT NULL,
	`provider_ref` text,
	`plan` text NOT NULL,
	`billing_interval` text NOT NULL,
	`currency` text NOT NULL,
	`amount` integer NOT NULL,
	`status` text DEFAULT 'open' NOT NULL,
	`url` text,
	`return_url` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`completed_at` integer,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `billing_checkouts_org_idx` ON `billing_checkouts` (`organization_id`,`created_at`);
--> statement-breakpoint
CREATE INDEX `billing_checkouts_provider_ref_idx` ON `billing_checkouts` (`provider`,`provider_ref`);
--> statement-breakpoint
CREATE TABLE `invoices` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`provider` text NOT NULL,
	`provider_ref` text NOT NULL,
	`checkout_id` text,
	`plan` text NOT NULL,
	`billing_interval` text NOT NULL,
	`amount` integer NOT NULL,
	`currency` text NOT NULL,
	`status` text NOT NULL,
	`period_start` integer NOT NULL,
	`period_end` integer NOT NULL,
	`created_at` integer NOT NULL,
	`paid_at` integer,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invoices_provider_ref_unique` ON `invoices` (`provider`,`provider_ref`);
--> statement-breakpoint
CREATE INDEX `invoices_org_idx` ON `invoices` (`organization_id`,`created_at`);
--> statement-breakpoint
CREATE TABLE `billing_events` (
	`provider` text NOT NULL,
	`event_id` text NOT NULL,
	`type` text NOT NULL,
	`organization_id` text,
	`received_at` integer NOT NULL,
	PRIMARY KEY(`provider`, `event_id`)
);
