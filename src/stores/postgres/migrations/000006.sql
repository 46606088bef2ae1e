-- The console's extensions (docs/extensions.md), in one step, as the SQLite store's.
-- GetQueueActivity: counts per minute, sharded by backend so that concurrent writers to
-- one queue do not wait on one row (shard -1 holds the depth sampled at the end of the
-- minute). GetDeadLetterBreakdown and DeleteMessagesById: partial indexes of
-- dead-lettered messages, which sends never write; the latest death's reason is a
-- generated column, so no trigger is needed to keep it.

CREATE TABLE queue_activity (
  queue_id      BIGINT NOT NULL,
  minute        BIGINT NOT NULL,
  shard         INTEGER NOT NULL,
  sent          BIGINT NOT NULL DEFAULT 0,
  received      BIGINT NOT NULL DEFAULT 0,
  deleted       BIGINT NOT NULL DEFAULT 0,
  dead_lettered BIGINT NOT NULL DEFAULT 0,
  depth         BIGINT,
  PRIMARY KEY (queue_id, minute, shard)
);
CREATE INDEX queue_activity_minute ON queue_activity (minute);
ALTER TABLE messages ADD COLUMN death_reason TEXT GENERATED ALWAYS AS ((deaths::jsonb) -> 0 ->> 'reason') STORED;
CREATE INDEX messages_dead_letter ON messages (queue_id, dead_letter_source, death_reason, dead_lettered_at)
  WHERE dead_letter_source IS NOT NULL;
CREATE INDEX messages_dead_letter_id ON messages (queue_id, message_id) WHERE dead_letter_source IS NOT NULL;
