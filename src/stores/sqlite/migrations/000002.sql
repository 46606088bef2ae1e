-- When the receive path moved the message into a dead-letter queue (selective redrive).
ALTER TABLE messages ADD COLUMN dead_lettered_at INTEGER;
-- Counters for metrics, updated in the transaction of the operation they count.
CREATE TABLE queue_stats (
  queue_id INTEGER PRIMARY KEY,
  sent     INTEGER NOT NULL DEFAULT 0,
  received INTEGER NOT NULL DEFAULT 0,
  deleted  INTEGER NOT NULL DEFAULT 0
);
-- Message move tasks (redrive). A task is driven by the node holding its lease.
CREATE TABLE move_tasks (
  id              TEXT PRIMARY KEY,
  account_id      TEXT NOT NULL,
  source_queue_id INTEGER NOT NULL,
  source_arn      TEXT NOT NULL,
  destination_arn TEXT,
  max_per_second  INTEGER,
  filter          TEXT,
  status          TEXT NOT NULL,
  failure_reason  TEXT,
  to_move         INTEGER NOT NULL,
  moved           INTEGER NOT NULL DEFAULT 0,
  started_at      INTEGER NOT NULL,
  -- Only messages at positions in (cursor, max_seq] are moved: those present at the start,
  -- so a redriven message that dies again is not picked up by the same task.
  cursor          INTEGER NOT NULL DEFAULT 0,
  max_seq         INTEGER NOT NULL,
  lease_owner     TEXT,
  lease_until     INTEGER NOT NULL DEFAULT 0,
  created_order   INTEGER NOT NULL
);
CREATE INDEX move_tasks_source ON move_tasks (source_queue_id, created_order);
CREATE INDEX move_tasks_status ON move_tasks (status);
