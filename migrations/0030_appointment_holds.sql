-- Short holds on appointment slots (issue 38, docs/appointments.md): a hold counts against the
-- slot's capacity until expires_at, then simply stops counting; booking with its id converts it.

CREATE TABLE `appointment_holds` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`service_id` text NOT NULL,
	`location_id` text NOT NULL,
	`staff_id` text,
	`start_at` integer NOT NULL,
	`end_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`location_id`) REFERENCES `locations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`staff_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `appointment_holds_slot_idx` ON `appointment_holds` (`service_id`,`location_id`,`start_at`);--> statement-breakpoint
CREATE INDEX `appointment_holds_staff_idx` ON `appointment_holds` (`staff_id`,`start_at`);--> statement-breakpoint
CREATE INDEX `appointment_holds_expires_idx` ON `appointment_holds` (`expires_at`);