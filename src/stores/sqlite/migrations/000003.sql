-- FIFO message groups. A group is available at the later of its head message's
-- visibility and the end of any receipt still held on one of its messages; triggers
-- keep this current on every write to messages, whichever code path makes it.
CREATE TABLE fifo_groups (
  queue_id     INTEGER NOT NULL,
  group_id     TEXT NOT NULL,
  available_at INTEGER NOT NULL,
  head_seq     INTEGER NOT NULL,
  PRIMARY KEY (queue_id, group_id)
) WITHOUT ROWID;
-- The next available group is the first entry at or before now: no scan of the backlog.
CREATE INDEX fifo_groups_ready ON fifo_groups (queue_id, available_at, head_seq);
CREATE INDEX messages_group ON messages (queue_id, group_id, seq) WHERE group_id IS NOT NULL;
CREATE INDEX messages_group_held ON messages (queue_id, group_id, visible_at)
  WHERE group_id IS NOT NULL AND receipt_token IS NOT NULL;

-- The group triggers keep this true: every FIFO group that has messages has one row in
-- fifo_groups, naming its first message (head_seq) and when the group can next be
-- received; a group without messages has no row. Each recomputes the row of the group
-- it touches from that group's messages: on an insert, a delete, and an update of a
-- message's queue, group, visibility or receipt (for the old group and the new). Steps
-- 6 to 8 make them cheaper and, at step 8, make a group available when its head is.
CREATE TRIGGER messages_group_insert AFTER INSERT ON messages WHEN NEW.group_id IS NOT NULL BEGIN

  DELETE FROM fifo_groups WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id;
  INSERT INTO fifo_groups (queue_id, group_id, available_at, head_seq)
    SELECT NEW.queue_id, NEW.group_id,
           max(h.visible_at, coalesce((SELECT max(r.visible_at) FROM messages r
             WHERE r.queue_id = NEW.queue_id AND r.group_id = NEW.group_id AND r.receipt_token IS NOT NULL), 0)),
           h.seq
      FROM (SELECT seq, visible_at FROM messages WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id
            ORDER BY seq LIMIT 1) h;
END;
CREATE TRIGGER messages_group_delete AFTER DELETE ON messages WHEN OLD.group_id IS NOT NULL BEGIN

  DELETE FROM fifo_groups WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id;
  INSERT INTO fifo_groups (queue_id, group_id, available_at, head_seq)
    SELECT OLD.queue_id, OLD.group_id,
           max(h.visible_at, coalesce((SELECT max(r.visible_at) FROM messages r
             WHERE r.queue_id = OLD.queue_id AND r.group_id = OLD.group_id AND r.receipt_token IS NOT NULL), 0)),
           h.seq
      FROM (SELECT seq, visible_at FROM messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id
            ORDER BY seq LIMIT 1) h;
END;
CREATE TRIGGER messages_group_update AFTER UPDATE OF queue_id, group_id, visible_at, receipt_token ON messages
  WHEN OLD.group_id IS NOT NULL OR NEW.group_id IS NOT NULL BEGIN

  DELETE FROM fifo_groups WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id;
  INSERT INTO fifo_groups (queue_id, group_id, available_at, head_seq)
    SELECT OLD.queue_id, OLD.group_id,
           max(h.visible_at, coalesce((SELECT max(r.visible_at) FROM messages r
             WHERE r.queue_id = OLD.queue_id AND r.group_id = OLD.group_id AND r.receipt_token IS NOT NULL), 0)),
           h.seq
      FROM (SELECT seq, visible_at FROM messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id
            ORDER BY seq LIMIT 1) h;

  DELETE FROM fifo_groups WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id;
  INSERT INTO fifo_groups (queue_id, group_id, available_at, head_seq)
    SELECT NEW.queue_id, NEW.group_id,
           max(h.visible_at, coalesce((SELECT max(r.visible_at) FROM messages r
             WHERE r.queue_id = NEW.queue_id AND r.group_id = NEW.group_id AND r.receipt_token IS NOT NULL), 0)),
           h.seq
      FROM (SELECT seq, visible_at FROM messages WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id
            ORDER BY seq LIMIT 1) h;
END;
-- Deduplication ids seen in the last five minutes, by queue and scope (group or queue).
CREATE TABLE fifo_dedup (
  queue_id   INTEGER NOT NULL,
  scope      TEXT NOT NULL,
  dedup_id   TEXT NOT NULL,
  message_id TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (queue_id, scope, dedup_id)
) WITHOUT ROWID;
CREATE INDEX fifo_dedup_expiry ON fifo_dedup (expires_at);
-- ReceiveRequestAttemptId: what an attempt returned, so a retry returns the same.
CREATE TABLE receive_attempts (
  queue_id   INTEGER NOT NULL,
  attempt_id TEXT NOT NULL,
  receipts   TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (queue_id, attempt_id)
) WITHOUT ROWID;
CREATE INDEX receive_attempts_expiry ON receive_attempts (expires_at);
