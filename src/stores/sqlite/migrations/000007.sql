-- A receive (or a longer visibility) holds a message for longer: its group keeps its
-- head and is available no sooner than that message is, so one row update does. Only
-- a shorter visibility needs the group recomputed from its messages.
DROP TRIGGER messages_group_update;
CREATE TRIGGER messages_group_hold AFTER UPDATE OF visible_at, receipt_token ON messages
  WHEN NEW.group_id IS NOT NULL AND OLD.queue_id = NEW.queue_id AND OLD.group_id = NEW.group_id
    AND NEW.receipt_token IS NOT NULL AND NEW.visible_at >= OLD.visible_at BEGIN
  UPDATE fifo_groups SET available_at = max(available_at, NEW.visible_at)
    WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id;
END;
CREATE TRIGGER messages_group_update AFTER UPDATE OF queue_id, group_id, visible_at, receipt_token ON messages
  WHEN NEW.group_id IS NOT NULL AND OLD.queue_id = NEW.queue_id AND OLD.group_id = NEW.group_id
    AND NOT (NEW.receipt_token IS NOT NULL AND NEW.visible_at >= OLD.visible_at) BEGIN

  DELETE FROM fifo_groups WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id;
  INSERT INTO fifo_groups (queue_id, group_id, available_at, head_seq)
    SELECT NEW.queue_id, NEW.group_id,
           max(h.visible_at, coalesce((SELECT max(r.visible_at) FROM messages r
             WHERE r.queue_id = NEW.queue_id AND r.group_id = NEW.group_id AND r.receipt_token IS NOT NULL), 0)),
           h.seq
      FROM (SELECT seq, visible_at FROM messages WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id
            ORDER BY seq LIMIT 1) h;
END;
