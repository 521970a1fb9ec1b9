-- Analytics of tickets older than the aggregates (issue 20): every organization that already
-- has tickets is listed once; the minute sweep counts a page of its tickets per run through
-- the drain's own version-guarded statements (src/jobs/analytics-backfill.ts) and deletes the
-- row when the last page is done. Organizations created later have no row: their tickets are
-- counted by the drain as they change.
CREATE TABLE `analytics_backfill` (
	`organization_id` text PRIMARY KEY NOT NULL,
	`after_created_at` integer DEFAULT -1 NOT NULL,
	`after_id` text DEFAULT '' NOT NULL,
	`tickets` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `analytics_backfill` (`organization_id`)
SELECT `o`.`id` FROM `organizations` AS `o` WHERE EXISTS (SELECT 1 FROM `tickets` AS `t` WHERE `t`.`organization_id` = `o`.`id`);

-- The summary's channel figures as integer columns (one per channel and metric: c created,
-- s served, n no-show, x cancelled, t transferred, w waited, wm wait ms), summed by SQL over a
-- range instead of a JSON object parsed per hour row; the JSON column is converted, then dropped.
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `app_c` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `app_s` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `app_n` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `app_x` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `app_t` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `app_w` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `app_wm` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `widget_c` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `widget_s` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `widget_n` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `widget_x` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `widget_t` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `widget_w` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `widget_wm` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `qr_c` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `qr_s` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `qr_n` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `qr_x` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `qr_t` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `qr_w` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `qr_wm` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `nfc_c` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `nfc_s` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `nfc_n` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `nfc_x` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `nfc_t` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `nfc_w` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `nfc_wm` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `remote_c` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `remote_s` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `remote_n` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `remote_x` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `remote_t` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `remote_w` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `remote_wm` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `operator_c` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `operator_s` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `operator_n` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `operator_x` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `operator_t` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `operator_w` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `operator_wm` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `vip_c` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `vip_s` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `vip_n` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `vip_x` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `vip_t` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `vip_w` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `vip_wm` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `transfer_c` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `transfer_s` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `transfer_n` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `transfer_x` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `transfer_t` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `transfer_w` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `transfer_wm` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `recovery_c` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `recovery_s` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `recovery_n` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `recovery_x` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `recovery_t` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `recovery_w` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `analytics_hourly` ADD `recovery_wm` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
UPDATE `analytics_hourly` SET `app_c` = coalesce(json_extract(`channels`, '$."app:c"'), 0), `app_s` = coalesce(json_extract(`channels`, '$."app:s"'), 0), `app_n` = coalesce(json_extract(`channels`, '$."app:n"'), 0), `app_x` = coalesce(json_extract(`channels`, '$."app:x"'), 0), `app_t` = coalesce(json_extract(`channels`, '$."app:t"'), 0), `app_w` = coalesce(json_extract(`channels`, '$."app:w"'), 0), `app_wm` = coalesce(json_extract(`channels`, '$."app:wm"'), 0), `widget_c` = coalesce(json_extract(`channels`, '$."widget:c"'), 0), `widget_s` = coalesce(json_extract(`channels`, '$."widget:s"'), 0), `widget_n` = coalesce(json_extract(`channels`, '$."widget:n"'), 0), `widget_x` = coalesce(json_extract(`channels`, '$."widget:x"'), 0), `widget_t` = coalesce(json_extract(`channels`, '$."widget:t"'), 0), `widget_w` = coalesce(json_extract(`channels`, '$."widget:w"'), 0), `widget_wm` = coalesce(json_extract(`channels`, '$."widget:wm"'), 0), `qr_c` = coalesce(json_extract(`channels`, '$."qr:c"'), 0), `qr_s` = coalesce(json_extract(`channels`, '$."qr:s"'), 0), `qr_n` = coalesce(json_extract(`channels`, '$."qr:n"'), 0), `qr_x` = coalesce(json_extract(`channels`, '$."qr:x"'), 0), `qr_t` = coalesce(json_extract(`channels`, '$."qr:t"'), 0), `qr_w` = coalesce(json_extract(`channels`, '$."qr:w"'), 0), `qr_wm` = coalesce(json_extract(`channels`, '$."qr:wm"'), 0), `nfc_c` = coalesce(json_extract(`channels`, '$."nfc:c"'), 0), `nfc_s` = coalesce(json_extract(`channels`, '$."nfc:s"'), 0), `nfc_n` = coalesce(json_extract(`channels`, '$."nfc:n"'), 0), `nfc_x` = coalesce(json_extract(`channels`, '$."nfc:x"'), 0), `nfc_t` = coalesce(json_extract(`channels`, '$."nfc:t"'), 0), `nfc_w` = coalesce(json_extract(`channels`, '$."nfc:w"'), 0), `nfc_wm` = coalesce(json_extract(`channels`, '$."nfc:wm"'), 0), `remote_c` = coalesce(json_extract(`channels`, '$."remote:c"'), 0), `remote_s` = coalesce(json_extract(`channels`, '$."remote:s"'), 0), `remote_n` = coalesce(json_extract(`channels`, '$."remote:n"'), 0), `remote_x` = coalesce(json_extract(`channels`, '$."remote:x"'), 0), `remote_t` = coalesce(json_extract(`channels`, '$."remote:t"'), 0), `remote_w` = coalesce(json_extract(`channels`, '$."remote:w"'), 0), `remote_wm` = coalesce(json_extract(`channels`, '$."remote:wm"'), 0), `operator_c` = coalesce(json_extract(`channels`, '$."operator:c"'), 0), `operator_s` = coalesce(json_extract(`channels`, '$."operator:s"'), 0), `operator_n` = coalesce(json_extract(`channels`, '$."operator:n"'), 0), `operator_x` = coalesce(json_extract(`channels`, '$."operator:x"'), 0), `operator_t` = coalesce(json_extract(`channels`, '$."operator:t"'), 0), `operator_w` = coalesce(json_extract(`channels`, '$."operator:w"'), 0), `operator_wm` = coalesce(json_extract(`channels`, '$."operator:wm"'), 0), `vip_c` = coalesce(json_extract(`channels`, '$."vip:c"'), 0), `vip_s` = coalesce(json_extract(`channels`, '$."vip:s"'), 0), `vip_n` = coalesce(json_extract(`channels`, '$."vip:n"'), 0), `vip_x` = coalesce(json_extract(`channels`, '$."vip:x"'), 0), `vip_t` = coalesce(json_extract(`channels`, '$."vip:t"'), 0), `vip_w` = coalesce(json_extract(`channels`, '$."vip:w"'), 0), `vip_wm` = coalesce(json_extract(`channels`, '$."vip:wm"'), 0), `transfer_c` = coalesce(json_extract(`channels`, '$."transfer:c"'), 0), `transfer_s` = coalesce(json_extract(`channels`, '$."transfer:s"'), 0), `transfer_n` = coalesce(json_extract(`channels`, '$."transfer:n"'), 0), `transfer_x` = coalesce(json_extract(`channels`, '$."transfer:x"'), 0), `transfer_t` = coalesce(json_extract(`channels`, '$."transfer:t"'), 0), `transfer_w` = coalesce(json_extract(`channels`, '$."transfer:w"'), 0), `transfer_wm` = coalesce(json_extract(`channels`, '$."transfer:wm"'), 0), `recovery_c` = coalesce(json_extract(`channels`, '$."recovery:c"'), 0), `recovery_s` = coalesce(json_extract(`channels`, '$."recovery:s"'), 0), `recovery_n` = coalesce(json_extract(`channels`, '$."recovery:n"'), 0), `recovery_x` = coalesce(json_extract(`channels`, '$."recovery:x"'), 0), `recovery_t` = coalesce(json_extract(`channels`, '$."recovery:t"'), 0), `recovery_w` = coalesce(json_extract(`channels`, '$."recovery:w"'), 0), `recovery_wm` = coalesce(json_extract(`channels`, '$."recovery:wm"'), 0);
--> statement-breakpoint
ALTER TABLE `analytics_hourly` DROP COLUMN `channels`;
