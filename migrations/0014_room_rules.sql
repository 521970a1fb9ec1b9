-- The rules a queue's room holds (docs/room-rules.md): every change of a rule a join or a
-- call-next checks (service status, closures and breaks, plan) takes a new version on the
-- queues it concerns; a room whose copy is older than the version on the queue's row refuses
-- to act on it and is given a fresh copy first.
ALTER TABLE `queues` ADD `rules_version` integer DEFAULT 0 NOT NULL;
