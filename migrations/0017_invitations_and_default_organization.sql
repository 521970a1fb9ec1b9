-- Membership by consent (issue 26): adding a member sends an invitation that the invitee
-- accepts or declines; nobody becomes a member of an organization they did not agree to join.
-- The invitation's id is also its link token: accepting needs the invitee's own session with
-- the invited e-mail, so the id alone grants nothing. One pending invitation per
-- (organization, e-mail): inviting again refreshes it.
CREATE TABLE `invitations` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`email` text NOT NULL,
	`role` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`invited_by` text,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invitations_pending_unique` ON `invitations` (`organization_id`,`email`) WHERE `status` = 'pending';
--> statement-breakpoint
CREATE INDEX `invitations_email_idx` ON `invitations` (`email`,`status`);
--> statement-breakpoint
-- The organization a user with several memberships works in when a request names none.
ALTER TABLE `users` ADD `default_organization_id` text;
--> statement-breakpoint
-- Webhook secrets replaced before the last rotation but younger than 24 h (issue 26): a second
-- rotation within the day no longer retires the first secret at once. JSON [{secret, expiresAt}].
ALTER TABLE `webhooks` ADD `retired_secrets` text DEFAULT '[]' NOT NULL;
