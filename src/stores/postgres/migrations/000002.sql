-- FIFO message groups, as in the SQLite store (its step 3). A receive finds the next
-- group it may take from fifo_groups instead of scanning the backlog.

CREATE TABLE fifo_groups (
  queue_id     BIGINT NOT NULL,
  group_id     TEXT NOT NULL,
  available_at BIGINT NOT NULL,
  head_seq     BIGINT NOT NULL,
  PRIMARY KEY (queue_id, group_id)
);
-- The next available group is the first entry at or before now: no scan of the backlog.
CREATE INDEX fifo_groups_ready ON fifo_groups (queue_id, available_at, head_seq);
CREATE INDEX messages_group ON messages (queue_id, group_id, seq) WHERE group_id IS NOT NULL;
CREATE INDEX messages_group_held ON messages (queue_id, group_id, visible_at)
  WHERE group_id IS NOT NULL AND receipt_token IS NOT NULL;

-- Recomputes one group's row. It first takes the row's lock (creating the row if
-- need be), so writers to one group recompute one after another; each later statement
-- then reads with a fresh snapshot and sees what the writer before it committed.
CREATE FUNCTION redrive_refresh_group(q BIGINT, g TEXT) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  head RECORD;
  held BIGINT;
BEGIN
  INSERT INTO fifo_groups AS f (queue_id, group_id, available_at, head_seq) VALUES (q, g, 0, 0)
    ON CONFLICT (queue_id, group_id) DO UPDATE SET head_seq = f.head_seq;
  SELECT seq, visible_at INTO head FROM messages WHERE queue_id = q AND group_id = g ORDER BY seq LIMIT 1;
  IF NOT FOUND THEN
    DELETE FROM fifo_groups WHERE queue_id = q AND group_id = g;
    RETURN;
  END IF;
  SELECT max(visible_at) INTO held FROM messages WHERE queue_id = q AND group_id = g AND receipt_token IS NOT NULL;
  UPDATE fifo_groups SET available_at = greatest(head.visible_at, coalesce(held, 0)), head_seq = head.seq
   WHERE queue_id = q AND group_id = g;
END $$;


-- The group triggers keep this true: every FIFO group that has messages has one row in
-- fifo_groups, naming its first message (head_seq) and when the group can next be
-- received (available_at: the later of the head's visibility and the end of any receipt
-- held on one of its messages); a group without messages has no row. They run on every
-- write to messages that can change either: an insert, a delete, and an update of a
-- message's queue, group, visibility or receipt. Step 5 makes a group available when
-- its head is.
CREATE FUNCTION redrive_group_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM redrive_refresh_group(NEW.queue_id, NEW.group_id);
  RETURN NULL;
END $$;
CREATE FUNCTION redrive_group_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM redrive_refresh_group(OLD.queue_id, OLD.group_id);
  RETURN NULL;
END $$;
CREATE FUNCTION redrive_group_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.group_id IS NOT NULL THEN
    PERFORM redrive_refresh_group(OLD.queue_id, OLD.group_id);
  END IF;
  IF NEW.group_id IS NOT NULL AND (NEW.queue_id <> OLD.queue_id OR NEW.group_id IS DISTINCT FROM OLD.group_id) THEN
    PERFORM redrive_refresh_group(NEW.queue_id, NEW.group_id);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER messages_group_insert AFTER INSERT ON messages
  FOR EACH ROW WHEN (NEW.group_id IS NOT NULL) EXECUTE FUNCTION redrive_group_inserted();
CREATE TRIGGER messages_group_delete AFTER DELETE ON messages
  FOR EACH ROW WHEN (OLD.group_id IS NOT NULL) EXECUTE FUNCTION redrive_group_deleted();
CREATE TRIGGER messages_group_update AFTER UPDATE OF queue_id, group_id, visible_at, receipt_token ON messages
  FOR EACH ROW WHEN ((OLD.group_id IS NOT NULL OR NEW.group_id IS NOT NULL)
    AND (OLD.queue_id, OLD.group_id, OLD.visible_at, OLD.receipt_token)
        IS DISTINCT FROM (NEW.queue_id, NEW.group_id, NEW.visible_at, NEW.receipt_token))
  EXECUTE FUNCTION redrive_group_updated();
