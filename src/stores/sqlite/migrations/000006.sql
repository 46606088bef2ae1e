-- A new message goes to the end of its group (positions only grow), so it changes
-- nothing of a group that has messages; an empty group has no receipts either, so the
-- new message alone makes its row.
DROP TRIGGER messages_group_insert;
CREATE TRIGGER messages_group_insert AFTER INSERT ON messages WHEN NEW.group_id IS NOT NULL BEGIN
  INSERT OR IGNORE INTO fifo_groups (queue_id, group_id, available_at, head_seq)
    VALUES (NEW.queue_id, NEW.group_id, NEW.visible_at, NEW.seq);
END;
-- A receive or a visibility change keeps a message in its group: messages_group_update
-- recomputes that group once; messages_group_move recomputes the old group and the new
-- one when a message changes queue or group.
DROP TRIGGER messages_group_update;
CREATE TRIGGER messages_group_update AFTER UPDATE OF queue_id, group_id, visible_at, receipt_token ON messages
  WHEN NEW.group_id IS NOT NULL AND OLD.queue_id = NEW.queue_id AND OLD.group_id = NEW.group_id BEGIN

  DELETE FROM fifo_groups WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id;
  INSERT INTO fifo_groups (queue_id, group_id, available_at, head_seq)
    SELECT NEW.queue_id, NEW.group_id,
           max(h.visible_at, coalesce((SELECT max(r.visible_at) FROM messages r
             WHERE r.queue_id = NEW.queue_id AND r.group_id = NEW.group_id AND r.receipt_token IS NOT NULL), 0)),
           h.seq
      FROM (SELECT seq, visible_at FROM messages WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id
            ORDER BY seq LIMIT 1) h;
END;
CREATE TRIGGER messages_group_move AFTER UPDATE OF queue_id, group_id ON messages
  WHEN (OLD.group_id IS NOT NULL OR NEW.group_id IS NOT NULL)
    AND (OLD.queue_id <> NEW.queue_id OR OLD.group_id IS NOT NEW.group_id) BEGIN

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
