-- A message becomes two rows (docs/architecture.md, Stores): `messages` keeps what was
-- sent, written once; `deliveries` keeps where its delivery stands, the only row a
-- receive, a visibility change or a release rewrites, so a receive never writes the
-- body's pages again. `deliveries` is keyed by position, which also serves peeks, move
-- tasks and the age of a queue (sent_at never decreases along a queue's positions), so
-- messages_position and messages_age go. Receipts become blobs: an old token's text is
-- kept as its bytes, so handles issued before this step still open.

-- Positions are handed out in memory (message-rows.ts) from above this mark, which is
-- written once per block of positions instead of sqlite_sequence in every commit.
CREATE TABLE counters (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);
INSERT INTO counters (name, value)
  SELECT 'seq', max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'messages'), 0),
                    coalesce((SELECT max(seq) FROM messages), 0)) + 1;

CREATE TABLE deliveries (
  queue_id          INTEGER NOT NULL,
  seq               INTEGER NOT NULL,
  sent_at           INTEGER NOT NULL,
  visible_at        INTEGER NOT NULL,
  receive_count     INTEGER NOT NULL DEFAULT 0,
  first_received_at INTEGER,
  received_at       INTEGER,
  receipt           BLOB,
  group_id          TEXT,
  PRIMARY KEY (queue_id, seq)
) WITHOUT ROWID;
INSERT INTO deliveries (queue_id, seq, sent_at, visible_at, receive_count, first_received_at, received_at, receipt, group_id)
  SELECT queue_id, seq, sent_at, visible_at, receive_count, first_received_at, received_at,
         CAST(receipt_token AS BLOB), group_id
    FROM messages ORDER BY queue_id, seq;

CREATE TABLE messages_sent (
  seq                INTEGER PRIMARY KEY,
  queue_id           INTEGER NOT NULL,
  message_id         TEXT NOT NULL,
  body               TEXT NOT NULL,
  attributes         TEXT,
  system_attributes  TEXT,
  md5_body           TEXT NOT NULL,
  md5_attributes     TEXT,
  md5_system         TEXT,
  sender_id          TEXT NOT NULL,
  dedup_id           TEXT,
  dead_letter_source TEXT,
  dead_lettered_at   INTEGER,
  deaths             TEXT,
  expires_at         INTEGER,
  death_reason       TEXT
);
INSERT INTO messages_sent (seq, queue_id, message_id, body, attributes, system_attributes, md5_body, md5_attributes,
                           md5_system, sender_id, dedup_id, dead_letter_source, dead_lettered_at, deaths, expires_at,
                           death_reason)
  SELECT seq, queue_id, message_id, body, attributes, system_attributes, md5_body, md5_attributes,
         md5_system, sender_id, dedup_id, dead_letter_source, dead_lettered_at, deaths, expires_at, death_reason
    FROM messages ORDER BY seq;
-- Its indexes and triggers go with it.
DROP TABLE messages;
DELETE FROM sqlite_sequence WHERE name = 'messages';
ALTER TABLE messages_sent RENAME TO messages;

-- The next visible message is the first entry at or before now.
CREATE INDEX deliveries_ready ON deliveries (queue_id, visible_at, seq);
-- FIFO and fair queues walk a group's messages in order.
CREATE INDEX deliveries_group ON deliveries (queue_id, group_id, seq) WHERE group_id IS NOT NULL;
-- The expiry sweep, per queue and across queues.
CREATE INDEX messages_expiry ON messages (queue_id, expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX messages_ttl ON messages (expires_at) WHERE expires_at IS NOT NULL;
-- GetDeadLetterBreakdown and DeleteMessagesById (as in step 9).
CREATE INDEX messages_dead_letter ON messages (queue_id, dead_letter_source, death_reason, dead_lettered_at)
  WHERE dead_letter_source IS NOT NULL;
CREATE INDEX messages_dead_letter_id ON messages (queue_id, message_id) WHERE dead_letter_source IS NOT NULL;

-- A message is deleted through its delivery row, whichever statement deletes it (a
-- delete, a purge, a sweep, a dead-letter move, a move task): the sent row goes with it.
CREATE TRIGGER deliveries_remove AFTER DELETE ON deliveries BEGIN
  DELETE FROM messages WHERE seq = OLD.seq;
END;

-- As in step 5: a queue's queue_depth row counts exactly its messages and the bytes of
-- their bodies; a move to another queue (an UPDATE of queue_id) leaves one and enters the other.
CREATE TRIGGER messages_depth_insert AFTER INSERT ON messages BEGIN
  UPDATE queue_depth SET messages = messages + 1, bytes = bytes + length(CAST(NEW.body AS BLOB)) WHERE queue_id = NEW.queue_id;
END;
CREATE TRIGGER messages_depth_delete AFTER DELETE ON messages BEGIN
  UPDATE queue_depth SET messages = messages - 1, bytes = bytes - length(CAST(OLD.body AS BLOB)) WHERE queue_id = OLD.queue_id;
END;
CREATE TRIGGER messages_depth_move AFTER UPDATE OF queue_id ON messages WHEN OLD.queue_id <> NEW.queue_id BEGIN
  UPDATE queue_depth SET messages = messages - 1, bytes = bytes - length(CAST(OLD.body AS BLOB)) WHERE queue_id = OLD.queue_id;
  UPDATE queue_depth SET messages = messages + 1, bytes = bytes + length(CAST(NEW.body AS BLOB)) WHERE queue_id = NEW.queue_id;
END;

-- As in step 9: death_reason is the reason of the first entry of the history.
CREATE TRIGGER messages_death_reason_insert AFTER INSERT ON messages WHEN NEW.deaths IS NOT NULL BEGIN
  UPDATE messages SET death_reason = json_extract(NEW.deaths, '$[0].reason') WHERE seq = NEW.seq;
END;
CREATE TRIGGER messages_death_reason_update AFTER UPDATE OF deaths ON messages WHEN NEW.deaths IS NOT OLD.deaths BEGIN
  UPDATE messages SET death_reason = json_extract(NEW.deaths, '$[0].reason') WHERE seq = NEW.seq;
END;

-- As in step 8, on the delivery rows: a group's fifo_groups row names its first message
-- and that message's visibility. A new message goes to the end of its group; only the
-- head's visibility matters; a delete or a move recomputes the head.
CREATE TRIGGER deliveries_group_insert AFTER INSERT ON deliveries WHEN NEW.group_id IS NOT NULL BEGIN
  INSERT OR IGNORE INTO fifo_groups (queue_id, group_id, available_at, head_seq)
    VALUES (NEW.queue_id, NEW.group_id, NEW.visible_at, NEW.seq);
END;
CREATE TRIGGER deliveries_group_update AFTER UPDATE OF visible_at ON deliveries
  WHEN NEW.group_id IS NOT NULL AND OLD.queue_id = NEW.queue_id AND OLD.group_id = NEW.group_id BEGIN
  UPDATE fifo_groups SET available_at = NEW.visible_at
   WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id AND head_seq = NEW.seq;
END;
CREATE TRIGGER deliveries_group_delete AFTER DELETE ON deliveries WHEN OLD.group_id IS NOT NULL BEGIN
  DELETE FROM fifo_groups WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id;
  INSERT INTO fifo_groups (queue_id, group_id, available_at, head_seq)
    SELECT queue_id, group_id, visible_at, seq FROM deliveries
     WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id ORDER BY seq LIMIT 1;
END;
CREATE TRIGGER deliveries_group_move AFTER UPDATE OF queue_id, group_id ON deliveries
  WHEN (OLD.group_id IS NOT NULL OR NEW.group_id IS NOT NULL)
    AND (OLD.queue_id <> NEW.queue_id OR OLD.group_id IS NOT NEW.group_id) BEGIN
  DELETE FROM fifo_groups WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id;
  INSERT INTO fifo_groups (queue_id, group_id, available_at, head_seq)
    SELECT queue_id, group_id, visible_at, seq FROM deliveries
     WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id ORDER BY seq LIMIT 1;
  DELETE FROM fifo_groups WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id;
  INSERT INTO fifo_groups (queue_id, group_id, available_at, head_seq)
    SELECT queue_id, group_id, visible_at, seq FROM deliveries
     WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id ORDER BY seq LIMIT 1;
END;
