-- A maintained message count for every queue, so that queueDepths (depths.ts) reads at
-- most 16 rows per queue instead of counting its backlog. Sharded by backend, so
-- concurrent sends to one queue do not wait on one row across nodes.
--
-- The count triggers keep this true: the sum of a queue's queue_count rows is its number
-- of messages. Inserts and deletes are counted per statement (transition tables: one
-- upsert per queue per statement, not one per row); moves (dead-lettering) per row, as
-- only they change queue_id. A bulk delete (redrive.bulk_delete, step 4) subtracts its
-- row count itself (deleteAllMessages in queues.ts). Shards are upserted in queue order,
-- so two statements never wait on each other's rows in opposite orders.
--
-- CREATE TRIGGER locks out writers until this step commits, so the backfill at the end
-- misses no concurrent send.

CREATE TABLE queue_count (
  queue_id BIGINT NOT NULL,
  shard    INTEGER NOT NULL,
  messages BIGINT NOT NULL,
  PRIMARY KEY (queue_id, shard)
);
CREATE FUNCTION redrive_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO queue_count AS c (queue_id, shard, messages)
    SELECT queue_id, pg_backend_pid() % 16, count(*) FROM added GROUP BY queue_id ORDER BY queue_id
    ON CONFLICT (queue_id, shard) DO UPDATE SET messages = c.messages + excluded.messages;
  RETURN NULL;
END $$;
CREATE FUNCTION redrive_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO queue_count AS c (queue_id, shard, messages)
    SELECT queue_id, pg_backend_pid() % 16, -count(*) FROM removed GROUP BY queue_id ORDER BY queue_id
    ON CONFLICT (queue_id, shard) DO UPDATE SET messages = c.messages + excluded.messages;
  RETURN NULL;
END $$;
CREATE FUNCTION redrive_count_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO queue_count AS c (queue_id, shard, messages)
    VALUES (least(OLD.queue_id, NEW.queue_id), pg_backend_pid() % 16, CASE WHEN OLD.queue_id < NEW.queue_id THEN -1 ELSE 1 END),
           (greatest(OLD.queue_id, NEW.queue_id), pg_backend_pid() % 16, CASE WHEN OLD.queue_id < NEW.queue_id THEN 1 ELSE -1 END)
    ON CONFLICT (queue_id, shard) DO UPDATE SET messages = c.messages + excluded.messages;
  RETURN NULL;
END $$;
CREATE TRIGGER messages_count_insert AFTER INSERT ON messages REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION redrive_count_inserted();
CREATE TRIGGER messages_count_delete AFTER DELETE ON messages REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT WHEN (current_setting('redrive.bulk_delete', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION redrive_count_deleted();
CREATE TRIGGER messages_count_move AFTER UPDATE OF queue_id ON messages
  FOR EACH ROW WHEN (OLD.queue_id <> NEW.queue_id) EXECUTE FUNCTION redrive_count_moved();
INSERT INTO queue_count (queue_id, shard, messages) SELECT queue_id, 0, count(*) FROM messages GROUP BY queue_id;
