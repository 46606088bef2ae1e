-- The tables the PostgreSQL store starts with.
--
-- Times are milliseconds since the epoch (BIGINT), as in the SQLite store, so both
-- stores take the engine's clock as given. Queue names sort in byte order (COLLATE "C"),
-- as SQLite sorts them, so ListQueues pages the same way on both.

CREATE TABLE queues (
  id            BIGSERIAL PRIMARY KEY,
  account_id    TEXT NOT NULL,
  name          TEXT COLLATE "C" NOT NULL,
  fifo          BOOLEAN NOT NULL,
  attributes    TEXT NOT NULL,
  tags          TEXT NOT NULL,
  created_at    BIGINT NOT NULL,
  modified_at   BIGINT NOT NULL,
  last_purge_at BIGINT,
  UNIQUE (account_id, name)
);
CREATE SEQUENCE messages_seq;
CREATE TABLE messages (
  seq                BIGINT PRIMARY KEY DEFAULT nextval('messages_seq'),
  queue_id           BIGINT NOT NULL,
  message_id         TEXT NOT NULL,
  body               TEXT NOT NULL,
  attributes         TEXT,
  system_attributes  TEXT,
  md5_body           TEXT NOT NULL,
  md5_attributes     TEXT,
  md5_system         TEXT,
  sender_id          TEXT NOT NULL,
  sent_at            BIGINT NOT NULL,
  visible_at         BIGINT NOT NULL,
  receive_count      INTEGER NOT NULL DEFAULT 0,
  first_received_at  BIGINT,
  received_at        BIGINT,
  receipt_token      TEXT,
  group_id           TEXT,
  dedup_id           TEXT,
  dead_letter_source TEXT,
  -- When the receive path moved it into a dead-letter queue.
  dead_lettered_at   BIGINT,
  -- Dead-letter history (JSON, newest first) and when its time-to-live ends.
  deaths             TEXT,
  expires_at         BIGINT
);
ALTER SEQUENCE messages_seq OWNED BY messages.seq;
-- The next visible message is the first entry of this index at or before now.
CREATE INDEX messages_ready ON messages (queue_id, visible_at, seq);
-- Retention sweeps walk this one.
CREATE INDEX messages_age ON messages (queue_id, sent_at);
-- Peeks and move tasks walk a queue by position.
CREATE INDEX messages_position ON messages (queue_id, seq);
-- The expiry sweep finds due messages here, whatever the backlog.
CREATE INDEX messages_expiry ON messages (queue_id, expires_at) WHERE expires_at IS NOT NULL;

-- Depth of the queues that have a length limit, so a send checks the limit without
-- counting the backlog. A row exists only for such queues (the first limited send
-- creates it); triggers keep it exact on every write, whichever path makes it. Its row
-- lock also serialises the limited sends of one queue across nodes.
CREATE TABLE queue_depth (
  queue_id BIGINT PRIMARY KEY,
  messages BIGINT NOT NULL,
  bytes    BIGINT NOT NULL
);
CREATE FUNCTION redrive_depth_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE queue_depth SET messages = messages + 1, bytes = bytes + octet_length(NEW.body) WHERE queue_id = NEW.queue_id;
  RETURN NULL;
END $$;
CREATE FUNCTION redrive_depth_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE queue_depth SET messages = messages - 1, bytes = bytes - octet_length(OLD.body) WHERE queue_id = OLD.queue_id;
  RETURN NULL;
END $$;

-- The depth triggers keep this true: a queue's queue_depth row counts exactly its
-- messages and the bytes of their bodies, whatever statement writes them (send, delete,
-- purge, retention and expiry sweeps, dead-lettering, move tasks). A message moved to
-- another queue (an UPDATE of queue_id, as dead-lettering does) leaves the old queue's
-- depth and enters the new one's. The UPDATEs find no row for a queue without a length
-- limit, so those queues pay one index probe per message. Step 4 lets bulk deletes
-- skip the delete trigger; step 12 counts inserts and deletes once per statement.
CREATE TRIGGER messages_depth_insert AFTER INSERT ON messages FOR EACH ROW EXECUTE FUNCTION redrive_depth_added();
CREATE TRIGGER messages_depth_delete AFTER DELETE ON messages FOR EACH ROW EXECUTE FUNCTION redrive_depth_removed();
CREATE TRIGGER messages_depth_move_out AFTER UPDATE OF queue_id ON messages
  FOR EACH ROW WHEN (OLD.queue_id <> NEW.queue_id) EXECUTE FUNCTION redrive_depth_removed();
CREATE TRIGGER messages_depth_move_in AFTER UPDATE OF queue_id ON messages
  FOR EACH ROW WHEN (OLD.queue_id <> NEW.queue_id) EXECUTE FUNCTION redrive_depth_added();

-- Counters for metrics, sharded by backend so that concurrent transactions on one
-- queue do not queue up behind one row lock; a read sums the shards.
CREATE TABLE queue_stats (
  queue_id BIGINT NOT NULL,
  shard    INTEGER NOT NULL,
  sent     BIGINT NOT NULL DEFAULT 0,
  received BIGINT NOT NULL DEFAULT 0,
  deleted  BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (queue_id, shard)
);

-- Message move tasks (redrive). A task is driven by the node holding its lease.
CREATE TABLE move_tasks (
  id              TEXT PRIMARY KEY,
  account_id      TEXT NOT NULL,
  source_queue_id BIGINT NOT NULL,
  source_arn      TEXT NOT NULL,
  destination_arn TEXT,
  max_per_second  INTEGER,
  filter          TEXT,
  status          TEXT NOT NULL,
  failure_reason  TEXT,
  to_move         BIGINT NOT NULL,
  moved           BIGINT NOT NULL DEFAULT 0,
  started_at      BIGINT NOT NULL,
  -- Only messages at positions in (cursor, max_seq] move: those present at the start.
  cursor          BIGINT NOT NULL DEFAULT 0,
  max_seq         BIGINT NOT NULL,
  lease_owner     TEXT,
  lease_until     BIGINT NOT NULL DEFAULT 0,
  created_order   BIGSERIAL NOT NULL
);
CREATE INDEX move_tasks_source ON move_tasks (source_queue_id, created_order);
CREATE INDEX move_tasks_status ON move_tasks (status);
-- At most one active task per source, even when two nodes start one at the same time.
CREATE UNIQUE INDEX move_tasks_one_active ON move_tasks (source_queue_id) WHERE status IN ('RUNNING', 'CANCELLING');

-- Named leases for background work that must run on one node at a time.
CREATE TABLE leases (
  name  TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  until BIGINT NOT NULL
);

-- Deduplication ids seen in the last five minutes, by queue and scope (group or queue).
CREATE TABLE fifo_dedup (
  queue_id   BIGINT NOT NULL,
  scope      TEXT NOT NULL,
  dedup_id   TEXT NOT NULL,
  message_id TEXT NOT NULL,
  seq        BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (queue_id, scope, dedup_id)
);
CREATE INDEX fifo_dedup_expiry ON fifo_dedup (expires_at);
-- ReceiveRequestAttemptId: what an attempt returned, so a retry returns the same.
CREATE TABLE receive_attempts (
  queue_id   BIGINT NOT NULL,
  attempt_id TEXT NOT NULL,
  receipts   TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (queue_id, attempt_id)
);
CREATE INDEX receive_attempts_expiry ON receive_attempts (expires_at);
