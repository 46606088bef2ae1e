-- A message becomes two rows (docs/architecture.md, Stores), as on SQLite: `messages`
-- keeps what was sent, written once; `deliveries` keeps where its delivery stands, the
-- only row a receive, a visibility change or a release rewrites, so a claim writes a
-- tuple of about 100 bytes and never the body's tuple or its TOAST. `deliveries` is keyed
-- by (queue, position), which also serves peeks, move tasks and the age of a queue, so
-- messages_position goes; messages keeps its primary key and its partial indexes.
-- Receipts become bytes (receipt-bytes.ts): an old token's text is kept as its UTF-8,
-- so handles issued before this step still open.
--
-- The old messages table is kept, not copied: its delivery columns are dropped, which
-- PostgreSQL does without rewriting a tuple, and only the small delivery rows are written
-- (one pass over the backlog, about 10 s per million messages). The step runs in the
-- migration's transaction, so other nodes wait for it and none sees a half-split message.

-- Fillfactor leaves room in each page for the new versions its claims write.
CREATE TABLE deliveries (
  queue_id          BIGINT NOT NULL,
  seq               BIGINT NOT NULL,
  sent_at           BIGINT NOT NULL,
  visible_at        BIGINT NOT NULL,
  receive_count     INTEGER NOT NULL DEFAULT 0,
  first_received_at BIGINT,
  received_at       BIGINT,
  receipt           BYTEA,
  group_id          TEXT,
  PRIMARY KEY (queue_id, seq)
) WITH (fillfactor = 80);
INSERT INTO deliveries (queue_id, seq, sent_at, visible_at, receive_count, first_received_at, received_at, receipt, group_id)
  SELECT queue_id, seq, sent_at, visible_at, receive_count, first_received_at, received_at,
         -- A 12-byte text would read back as an SQS token's bytes: tokenBytes marks it with a zero byte.
         CASE WHEN octet_length(receipt_token) = 12 THEN convert_to(receipt_token, 'UTF8') || '\x00'::bytea
              ELSE convert_to(receipt_token, 'UTF8') END,
         group_id
    FROM messages ORDER BY queue_id, seq;

-- The next visible message is the first entry at or before now; the in-flight and
-- delayed ones are the entries after now.
CREATE INDEX deliveries_ready ON deliveries (queue_id, visible_at, seq);
-- FIFO and fair queues walk a group's messages in order.
CREATE INDEX deliveries_group ON deliveries (queue_id, group_id, seq) WHERE group_id IS NOT NULL;

-- The old message table's delivery side goes: its group triggers, indexes and columns.
DROP TRIGGER messages_group_insert ON messages;
DROP TRIGGER messages_group_delete ON messages;
DROP TRIGGER messages_group_update ON messages;
DROP INDEX messages_ready;
DROP INDEX messages_position;
DROP INDEX messages_group;
ALTER TABLE messages
  DROP COLUMN sent_at,
  DROP COLUMN visible_at,
  DROP COLUMN receive_count,
  DROP COLUMN first_received_at,
  DROP COLUMN received_at,
  DROP COLUMN receipt_token,
  DROP COLUMN group_id;

-- A message is deleted through its delivery row, whichever statement deletes it (a
-- delete, a purge, a sweep, a dead-letter move, a move task): its sent row goes with it,
-- once per statement. The count and depth triggers of messages (steps 9 and 12) then
-- count it, as before.
CREATE FUNCTION redrive_deliveries_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM messages WHERE seq = ANY(ARRAY(SELECT seq FROM removed));
  RETURN NULL;
END $$;
CREATE TRIGGER deliveries_remove AFTER DELETE ON deliveries REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION redrive_deliveries_removed();

-- As in step 8, on the delivery rows: every FIFO group that has messages has one row in
-- fifo_groups naming its first message and that message's visibility.
CREATE OR REPLACE FUNCTION redrive_refresh_group(q BIGINT, g TEXT) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  head RECORD;
BEGIN
  INSERT INTO fifo_groups AS f (queue_id, group_id, available_at, head_seq) VALUES (q, g, 0, 0)
    ON CONFLICT (queue_id, group_id) DO UPDATE SET head_seq = f.head_seq;
  SELECT seq, visible_at INTO head FROM deliveries WHERE queue_id = q AND group_id = g ORDER BY seq LIMIT 1;
  IF NOT FOUND THEN
    DELETE FROM fifo_groups WHERE queue_id = q AND group_id = g;
    RETURN;
  END IF;
  UPDATE fifo_groups SET available_at = head.visible_at, head_seq = head.seq WHERE queue_id = q AND group_id = g;
END $$;
CREATE TRIGGER deliveries_group_insert AFTER INSERT ON deliveries
  FOR EACH ROW WHEN (NEW.group_id IS NOT NULL) EXECUTE FUNCTION redrive_group_inserted();
CREATE TRIGGER deliveries_group_delete AFTER DELETE ON deliveries
  FOR EACH ROW WHEN (OLD.group_id IS NOT NULL AND current_setting('redrive.bulk_delete', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION redrive_group_deleted();
CREATE TRIGGER deliveries_group_update AFTER UPDATE OF queue_id, group_id, visible_at ON deliveries
  FOR EACH ROW WHEN ((OLD.group_id IS NOT NULL OR NEW.group_id IS NOT NULL)
    AND (OLD.queue_id, OLD.group_id, OLD.visible_at) IS DISTINCT FROM (NEW.queue_id, NEW.group_id, NEW.visible_at))
  EXECUTE FUNCTION redrive_group_updated();
