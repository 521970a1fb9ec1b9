-- A ticket's phone and its conversation (0022) are personal data: the anonymisation sweep
-- clears them past the organization's retention, reading only rows still holding them.
CREATE INDEX `tickets_phone_org_created_idx` ON `tickets` (`organization_id`,`created_at`) WHERE phone IS NOT NULL;--> statement-breakpoint
CREATE INDEX `ticket_messages_personal_idx` ON `ticket_messages` (`organization_id`,`created_at`) WHERE phone <> '(anonymised)';
