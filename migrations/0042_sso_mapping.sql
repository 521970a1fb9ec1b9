ALTER TABLE `sso_connections` ADD `role_claim` text;--> statement-breakpoint
ALTER TABLE `sso_connections` ADD `role_mapping` text;--> statement-breakpoint
ALTER TABLE `sso_connections` ADD `default_location_ids` text;--> statement-breakpoint
ALTER TABLE `sso_sign_ins` ADD `return_to` text;