CREATE TABLE `message_templates` (
	`organization_id` text NOT NULL,
	`queue_scope` text DEFAULT '' NOT NULL,
	`key` text NOT NULL,
	`language` text NOT NULL,
	`title` text NOT NULL,
	`body` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`organization_id`, `queue_scope`, `key`, `language`),
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
