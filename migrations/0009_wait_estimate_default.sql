-- The queue's time per service before the room has enough call history (docs/wait-estimate.md).
ALTER TABLE `queues` ADD `default_service_minutes` integer DEFAULT 5 NOT NULL;
