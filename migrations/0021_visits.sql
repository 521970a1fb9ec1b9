-- Visits (issue 29, docs/visits.md): what a visit carries to the counter.
--
-- Intake questions per service: the definition is one JSON document per service (at most 20
-- questions, read whole at every join of the service and at every edit, never queried inside).
CREATE TABLE `service_intake` (
	`service_id` text PRIMARY KEY NOT NULL REFERENCES `services`(`id`) ON DELETE CASCADE,
	`organization_id` text NOT NULL,
	`fields` text NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
-- A ticket's answers, projected from its room like its other fields: the open ones (which
-- exports and webhooks carry) and the personal ones (erased by the retention sweep).
ALTER TABLE `tickets` ADD `intake` text;
--> statement-breakpoint
ALTER TABLE `tickets` ADD `intake_personal` text;
--> statement-breakpoint
-- Only the rows still holding personal answers: what the anonymisation sweep has left to do.
CREATE INDEX `tickets_intake_personal_org_created_idx` ON `tickets` (`organization_id`,`created_at`) WHERE intake_personal IS NOT NULL;
--> statement-breakpoint
-- Labels (docs/visits.md): a ticket's labels, JSON array, projected from its room; and the
-- organization's label list, grown by every label staff put on a ticket.
ALTER TABLE `tickets` ADD `labels` text;
--> statement-breakpoint
-- How many questions its service asks, copied on each queue so that a join of a service with none
-- reads nothing more than before (the join's hot path: docs/hot-path.md).
ALTER TABLE `queues` ADD `intake_questions` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
CREATE TABLE `organization_labels` (
	`organization_id` text NOT NULL REFERENCES `organizations`(`id`) ON DELETE CASCADE,
	`label` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`organization_id`, `label`)
);
