-- The console's extensions (docs/extensions.md), in one step.
-- GetQueueActivity: each queue's counts per minute (activity-counts.ts adds them) and
-- its depth at the end of the minute (activity-sampler.ts).
CREATE TABLE queue_activity (
  queue_id      INTEGER NOT NULL,
  minute        INTEGER NOT NULL,
  sent          INTEGER NOT NULL DEFAULT 0,
  received      INTEGER NOT NULL DEFAULT 0,
  deleted       INTEGER NOT NULL DEFAULT 0,
  dead_lettered INTEGER NOT NULL DEFAULT 0,
  depth         INTEGER,
  PRIMARY KEY (queue_id, minute)
) WITHOUT ROWID;
CREATE INDEX queue_activity_minute ON queue_activity (minute);
-- GetDeadLetterBreakdown groups a DLQ's messages by source and latest death reason
-- in one pass over this partial index, never reading a message; DeleteMessagesById
-- finds dead-lettered messages by id in the second. Sends write neither (no source).
-- The reason of the latest death, as a real column: a generated one would keep the
-- index from covering. The two death_reason triggers keep it equal to the first entry
-- of the history (deaths), whichever path writes the history.
ALTER TABLE messages ADD COLUMN death_reason TEXT;
UPDATE messages SET death_reason = json_extract(deaths, '$[0].reason') WHERE deaths IS NOT NULL;
CREATE TRIGGER messages_death_reason_insert AFTER INSERT ON messages WHEN NEW.deaths IS NOT NULL BEGIN
  UPDATE messages SET death_reason = json_extract(NEW.deaths, '$[0].reason') WHERE seq = NEW.seq;
END;
CREATE TRIGGER messages_death_reason_update AFTER UPDATE OF deaths ON messages WHEN NEW.deaths IS NOT OLD.deaths BEGIN
  UPDATE messages SET death_reason = json_extract(NEW.deaths, '$[0].reason') WHERE seq = NEW.seq;
END;
CREATE INDEX messages_dead_letter ON messages (queue_id, dead_letter_source, death_reason, dead_lettered_at)
  WHERE dead_letter_source IS NOT NULL;
CREATE INDEX messages_dead_letter_id ON messages (queue_id, message_id) WHERE dead_letter_source IS NOT NULL;
-- PeekMessages (and move tasks) walk a queue by position: without this index SQLite read
-- every message of the queue by age and sorted them for each page (70 ms a page of a
-- million-message queue). Positions only grow, so each send appends at the end of its
-- queue's range. The PostgreSQL store has it from its first step (messages_position).
CREATE INDEX messages_position ON messages (queue_id, seq);
