ALTER TABLE `organizations` ADD `live_organization_id` text REFERENCES organizations(id) ON DELETE cascade;--> statement-breakpoint
ALTER TABLE `organizations` ADD `catalogue_copied_at` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `organizations_live_unique` ON `organizations` (`live_organization_id`);