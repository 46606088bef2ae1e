-- queue_depth (step 1) kept per statement by the counting functions of step 9, instead
-- of a PL/pgSQL call per row inserted or deleted: each statement's transition table adds
-- to or takes from the depth of each queue it wrote, once. Queues without a length limit
-- have no queue_depth row, so for them this is one empty join per statement. Moves (an
-- UPDATE of queue_id) keep their per-row triggers from step 1.

DROP TRIGGER messages_depth_insert ON messages;
DROP TRIGGER messages_depth_delete ON messages;
CREATE OR REPLACE FUNCTION redrive_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO queue_count AS c (queue_id, shard, messages)
    SELECT queue_id, pg_backend_pid() % 16, count(*) FROM added GROUP BY queue_id ORDER BY queue_id
    ON CONFLICT (queue_id, shard) DO UPDATE SET messages = c.messages + excluded.messages;
  UPDATE queue_depth d SET messages = d.messages + a.n, bytes = d.bytes + a.b
    FROM (SELECT queue_id, count(*) AS n, sum(octet_length(body)) AS b FROM added GROUP BY queue_id) a
   WHERE d.queue_id = a.queue_id;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION redrive_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO queue_count AS c (queue_id, shard, messages)
    SELECT queue_id, pg_backend_pid() % 16, -count(*) FROM removed GROUP BY queue_id ORDER BY queue_id
    ON CONFLICT (queue_id, shard) DO UPDATE SET messages = c.messages + excluded.messages;
  UPDATE queue_depth d SET messages = d.messages - a.n, bytes = d.bytes - a.b
    FROM (SELECT queue_id, count(*) AS n, sum(octet_length(body)) AS b FROM removed GROUP BY queue_id) a
   WHERE d.queue_id = a.queue_id;
  RETURN NULL;
END $$;
