-- Dead-letter history (JSON, newest first) and the moment a message's time-to-live ends.
ALTER TABLE messages ADD COLUMN deaths TEXT;
ALTER TABLE messages ADD COLUMN expires_at INTEGER;
-- The expiry sweep finds due messages here, whatever the backlog.
CREATE INDEX messages_expiry ON messages (queue_id, expires_at) WHERE expires_at IS NOT NULL;
-- Depth of the queues that have a length limit, so a send checks the limit without
-- counting the backlog. A row exists only for such queues (the first limited send
-- creates it).
CREATE TABLE queue_depth (
  queue_id INTEGER PRIMARY KEY,
  messages INTEGER NOT NULL,
  bytes    INTEGER NOT NULL
);

-- The depth triggers keep this true: a queue's queue_depth row counts exactly its
-- messages and the bytes of their bodies, whatever statement writes them (send, delete,
-- purge, retention and expiry sweeps, dead-lettering, move tasks). A message moved to
-- another queue (an UPDATE of queue_id, as dead-lettering does) leaves the old queue's
-- depth and enters the new one's. The UPDATEs find no row for a queue without a length
-- limit.
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
