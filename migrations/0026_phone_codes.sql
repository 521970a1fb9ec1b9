-- A one-time code proves a visitor's number before it is texted again (issue #26, docs/limits.md
-- "SMS and messaging caps"). `require_phone_code`: null = the default (off), like the other
-- settings of the policy. One verification per ticket: only an HMAC of the code is kept, with
-- its expiry and the wrong attempts, so a leaked table gives no usable code; the number and the
-- ticket's language are what a resend needs (the room keeps them, not the Worker).
ALTER TABLE `sms_policies` ADD `require_phone_code` integer;
--> statement-breakpoint
CREATE TABLE `phone_verifications` (
	`ticket_id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`phone` text NOT NULL,
	`language` text,
	`code_hash` text NOT NULL,
	`expires_at` integer NOT NULL,
	`failed_attempts` integer DEFAULT 0 NOT NULL,
	`codes_sent` integer DEFAULT 1 NOT NULL,
	`verified_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `phone_verifications_org_created_idx` ON `phone_verifications` (`organization_id`,`created_at`);
--> statement-breakpoint
CREATE INDEX `phone_verifications_org_phone_idx` ON `phone_verifications` (`organization_id`,`phone`);
