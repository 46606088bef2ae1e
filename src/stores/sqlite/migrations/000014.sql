-- One count per event (docs/monitoring.md): GetQueueActivity's counts are the engine's
-- (activity-counts.ts), added once a second; they gain the messages that arrived in the
-- queue by dead-lettering. The per-queue totals each operation kept in its own
-- transaction had no reader: they go.
ALTER TABLE queue_activity ADD COLUMN dead_letter_arrivals INTEGER NOT NULL DEFAULT 0;
DROP TABLE queue_stats;
