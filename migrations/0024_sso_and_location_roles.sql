-- Roles per location (issue 31): a membership (and the invitation that leads to it) may be
-- limited to some of the organization's locations. JSON array of location ids; NULL = the
-- whole organization, which is what every existing membership keeps.
ALTER TABLE `members` ADD `location_ids` text;
--> statement-breakpoint
ALTER TABLE `invitations` ADD `location_ids` text;
