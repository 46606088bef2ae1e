-- A FIFO group is available as soon as its first message is visible: messages behind
-- it that are still in flight stop a receive there, but do not hold the whole group, as
-- in SQS. The triggers then keep this true: a group's row names its first message and
-- that message's visibility. Only the head's visibility matters, so a visibility change
-- updates the row only when it is the head's (messages_group_update); a delete or a move
-- recomputes the head from the group's messages. Receipts do not count, so
-- messages_group_hold and the index of held messages go, and every row is rebuilt from
-- the heads.
DROP TRIGGER messages_group_hold;
DROP TRIGGER messages_group_update;
DROP TRIGGER messages_group_delete;
DROP TRIGGER messages_group_move;
DROP INDEX messages_group_held;
CREATE TRIGGER messages_group_update AFTER UPDATE OF visible_at ON messages
  WHEN NEW.group_id IS NOT NULL AND OLD.queue_id = NEW.queue_id AND OLD.group_id = NEW.group_id BEGIN
  UPDATE fifo_groups SET available_at = NEW.visible_at
   WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id AND head_seq = NEW.seq;
END;
CREATE TRIGGER messages_group_delete AFTER DELETE ON messages WHEN OLD.group_id IS NOT NULL BEGIN

  DELETE FROM fifo_groups WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id;
  INSERT INTO fifo_groups (queue_id, group_id, available_at, head_seq)
    SELECT queue_id, group_id, visible_at, seq FROM messages
     WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id ORDER BY seq LIMIT 1;
END;
CREATE TRIGGER messages_group_move AFTER UPDATE OF queue_id, group_id ON messages
  WHEN (OLD.group_id IS NOT NULL OR NEW.group_id IS NOT NULL)
    AND (OLD.queue_id <> NEW.queue_id OR OLD.group_id IS NOT NEW.group_id) BEGIN

  DELETE FROM fifo_groups WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id;
  INSERT INTO fifo_groups (queue_id, group_id, available_at, head_seq)
    SELECT queue_id, group_id, visible_at, seq FROM messages
     WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id ORDER BY seq LIMIT 1;

  DELETE FROM fifo_groups WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id;
  INSERT INTO fifo_groups (queue_id, group_id, available_at, head_seq)
    SELECT queue_id, group_id, visible_at, seq FROM messages
     WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id ORDER BY seq LIMIT 1;
END;
DELETE FROM fifo_groups;
INSERT INTO fifo_groups (queue_id, group_id, available_at, head_seq)
  SELECT m.queue_id, m.group_id, m.visible_at, m.seq FROM messages m
    JOIN (SELECT min(seq) AS seq FROM messages WHERE group_id IS NOT NULL GROUP BY queue_id, group_id) h ON h.seq = m.seq;
