-- A FIFO group is available as soon as its first message is visible: an in-flight
-- message behind the head stops a receive there, but does not hold the whole group, as
-- in SQS. Only the head's visibility matters, so a visibility change updates the group's
-- row only when it is the head's (redrive_group_updated); a delete or a move recomputes
-- the head (redrive_refresh_group). The triggers then keep this true: available_at is
-- the visibility of the group's first message. Receipts do not count, so the index of
-- held messages (step 2) is dropped, and the rows of existing groups are recomputed from
-- their heads.

CREATE OR REPLACE FUNCTION redrive_refresh_group(q BIGINT, g TEXT) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  head RECORD;
BEGIN
  INSERT INTO fifo_groups AS f (queue_id, group_id, available_at, head_seq) VALUES (q, g, 0, 0)
    ON CONFLICT (queue_id, group_id) DO UPDATE SET head_seq = f.head_seq;
  SELECT seq, visible_at INTO head FROM messages WHERE queue_id = q AND group_id = g ORDER BY seq LIMIT 1;
  IF NOT FOUND THEN
    DELETE FROM fifo_groups WHERE queue_id = q AND group_id = g;
    RETURN;
  END IF;
  UPDATE fifo_groups SET available_at = head.visible_at, head_seq = head.seq WHERE queue_id = q AND group_id = g;
END $$;
CREATE OR REPLACE FUNCTION redrive_group_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.queue_id = OLD.queue_id AND NEW.group_id IS NOT DISTINCT FROM OLD.group_id THEN
    -- Waits for the row lock, then re-checks head_seq against the newest version.
    UPDATE fifo_groups SET available_at = NEW.visible_at
     WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id AND head_seq = NEW.seq;
    RETURN NULL;
  END IF;
  IF OLD.group_id IS NOT NULL THEN
    PERFORM redrive_refresh_group(OLD.queue_id, OLD.group_id);
  END IF;
  IF NEW.group_id IS NOT NULL THEN
    PERFORM redrive_refresh_group(NEW.queue_id, NEW.group_id);
  END IF;
  RETURN NULL;
END $$;
DROP TRIGGER messages_group_update ON messages;
CREATE TRIGGER messages_group_update AFTER UPDATE OF queue_id, group_id, visible_at ON messages
  FOR EACH ROW WHEN ((OLD.group_id IS NOT NULL OR NEW.group_id IS NOT NULL)
    AND (OLD.queue_id, OLD.group_id, OLD.visible_at) IS DISTINCT FROM (NEW.queue_id, NEW.group_id, NEW.visible_at))
  EXECUTE FUNCTION redrive_group_updated();
DROP INDEX messages_group_held;
UPDATE fifo_groups f SET available_at = m.visible_at, head_seq = m.seq
  FROM (SELECT DISTINCT ON (queue_id, group_id) queue_id, group_id, seq, visible_at FROM messages
         WHERE group_id IS NOT NULL ORDER BY queue_id, group_id, seq) m
 WHERE f.queue_id = m.queue_id AND f.group_id = m.group_id;
