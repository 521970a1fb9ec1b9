-- Data retention (issue 20): each organization's personal-data retention period, and partial
-- indexes that list only the rows still holding personal data, so the anonymisation sweep
-- reads what is left to do and never rescans what it already did.
ALTER TABLE `organizations` ADD `data_retention_days` integer DEFAULT 90 NOT NULL;--> statement-breakpoint
CREATE INDEX `tickets_named_org_created_idx` ON `tickets` (`organization_id`,`created_at`) WHERE visitor_name IS NOT NULL;--> statement-breakpoint
CREATE INDEX `notification_deliveries_personal_idx` ON `notification_deliveries` (`organization_id`,`created_at`) WHERE recipient <> '(anonymised)';--> statement-breakpoint
CREATE INDEX `webhook_deliveries_personal_idx` ON `webhook_deliveries` (`organization_id`,`created_at`) WHERE json_extract(payload, '$.data.phone') IS NOT NULL;--> statement-breakpoint
CREATE INDEX `visitor_push_subscriptions_org_created_idx` ON `visitor_push_subscriptions` (`organization_id`,`created_at`);
