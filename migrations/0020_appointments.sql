-- Appointments blended with walk-ins (issue 28, docs/appointments.md).
--
-- A location's weekly opening hours, in its own timezone: JSON {"mon": [{"open": "08:30",
-- "close": "12:00"}], ...}; null keeps the location open all day, as before.
ALTER TABLE `locations` ADD `opening_hours` text;
--> statement-breakpoint
-- A service's booking settings (JSON, docs/appointments.md); null: not bookable.
ALTER TABLE `services` ADD `booking` text;
--> statement-breakpoint
-- One appointment. Booking is exact under concurrency through a conditional INSERT ... SELECT
-- (capacity of the slot, staff member free) that D1 runs as one statement: see
-- src/services/appointments.ts.
CREATE TABLE `appointments` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`service_id` text NOT NULL,
	`location_id` text NOT NULL,
	`staff_id` text,
	`start_at` integer NOT NULL,
	`end_at` integer NOT NULL,
	`status` text DEFAULT 'booked' NOT NULL,
	`customer_name` text NOT NULL,
	`customer_phone` text,
	`customer_email` text,
	`language` text DEFAULT 'fr' NOT NULL,
	`notes` text,
	`customer_user_id` text,
	`calendar_event_id` text,
	`token_hash` text NOT NULL,
	`ticket_id` text,
	`queue_id` text,
	`checked_in_at` integer,
	`cancelled_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`location_id`) REFERENCES `locations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`staff_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`customer_user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
-- The slot's count (capacity check) and a location's day (staff list).
CREATE INDEX `appointments_slot_idx` ON `appointments` (`service_id`,`location_id`,`start_at`);
--> statement-breakpoint
-- A staff member's other appointments (never twice at once).
CREATE INDEX `appointments_staff_idx` ON `appointments` (`staff_id`,`start_at`);
--> statement-breakpoint
CREATE INDEX `appointments_location_start_idx` ON `appointments` (`location_id`,`start_at`);
--> statement-breakpoint
CREATE INDEX `appointments_customer_idx` ON `appointments` (`customer_user_id`,`start_at`);
--> statement-breakpoint
-- The no-show sweep reads booked appointments whose start has passed.
CREATE INDEX `appointments_status_start_idx` ON `appointments` (`status`,`start_at`);
