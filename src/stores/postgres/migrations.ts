import { DEPTH_PER_STATEMENT } from './steps.js';

/**
 * Versioned schema of the PostgreSQL store. Each entry moves the database from version
 * i to i+1 and is never edited once released; a new change is a new entry. The table
 * redrive_migrations records where a database stands (see migrate.ts).
 *
 * Times are milliseconds since the epoch (BIGINT), as in the SQLite store, so both
 * stores take the engine's clock as given. Queue names sort in byte order (COLLATE "C"),
 * as SQLite sorts them, so ListQueues pages the same way on both.
 */
export const migrations: string[] = [
  `
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
  `,
  // FIFO message groups, as in the SQLite store (its migration 3): a group is available
  // at the later of its head message's visibility and the end of any receipt still held
  // on one of its messages. Triggers keep this current on every write to messages.
  `
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
  `,
  `
  -- Server secrets shared by every node (the receipt-handle key).
  CREATE TABLE secrets (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
  // A purge or a queue deletion sets redrive.bulk_delete for its transaction and rebuilds
  // the queue's groups and depth once (postgres-store.ts), instead of a trigger call per
  // deleted message.
  `
  DROP TRIGGER messages_depth_delete ON messages;
  CREATE TRIGGER messages_depth_delete AFTER DELETE ON messages
    FOR EACH ROW WHEN (current_setting('redrive.bulk_delete', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION redrive_depth_removed();
  DROP TRIGGER messages_group_delete ON messages;
  CREATE TRIGGER messages_group_delete AFTER DELETE ON messages
    FOR EACH ROW WHEN (OLD.group_id IS NOT NULL AND current_setting('redrive.bulk_delete', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION redrive_group_deleted();
  `,
  // A FIFO group is available as soon as its first message is visible (issue 16): an
  // in-flight message behind it stops a receive there but no longer holds the group.
  // Only the head's visibility matters, so a visibility change touches the group row only
  // when it is the head's; a delete or a move recomputes the head as before.
  `
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
  `,
  // The console's extensions (docs/extensions.md), in one step, as the SQLite store's.
  // GetQueueActivity: counts per minute, sharded by backend as queue_stats is (shard -1
  // holds the depth sampled at the end of the minute); GetDeadLetterBreakdown and
  // DeleteMessagesById: partial indexes of dead-lettered messages, which sends never write.
  `
  CREATE TABLE queue_activity (
    queue_id      BIGINT NOT NULL,
    minute        BIGINT NOT NULL,
    shard         INTEGER NOT NULL,
    sent          BIGINT NOT NULL DEFAULT 0,
    received      BIGINT NOT NULL DEFAULT 0,
    deleted       BIGINT NOT NULL DEFAULT 0,
    dead_lettered BIGINT NOT NULL DEFAULT 0,
    depth         BIGINT,
    PRIMARY KEY (queue_id, minute, shard)
  );
  CREATE INDEX queue_activity_minute ON queue_activity (minute);
  ALTER TABLE messages ADD COLUMN death_reason TEXT GENERATED ALWAYS AS ((deaths::jsonb) -> 0 ->> 'reason') STORED;
  CREATE INDEX messages_dead_letter ON messages (queue_id, dead_letter_source, death_reason, dead_lettered_at)
    WHERE dead_letter_source IS NOT NULL;
  CREATE INDEX messages_dead_letter_id ON messages (queue_id, message_id) WHERE dead_letter_source IS NOT NULL;
  `,
  `
  -- AMQP 0-9-1 (docs/amqp.md): exchanges, bindings and how queues were declared over AMQP.

  CREATE TABLE amqp_exchanges (
    account_id  TEXT NOT NULL,
    name        TEXT NOT NULL,
    type        TEXT NOT NULL,
    durable     BOOLEAN NOT NULL,
    auto_delete BOOLEAN NOT NULL,
    internal    BOOLEAN NOT NULL,
    arguments   TEXT NOT NULL,
    PRIMARY KEY (account_id, name)
  );
  CREATE TABLE amqp_bindings (
    id               BIGSERIAL PRIMARY KEY,
    account_id       TEXT NOT NULL,
    source           TEXT NOT NULL,
    destination_kind TEXT NOT NULL,
    destination      TEXT NOT NULL,
    routing_key      TEXT NOT NULL,
    arguments        TEXT NOT NULL,
    UNIQUE (account_id, source, destination_kind, destination, routing_key, arguments)
  );
  CREATE INDEX amqp_bindings_destination ON amqp_bindings (account_id, destination_kind, destination);
  CREATE TABLE amqp_queues (
    queue_id    BIGINT PRIMARY KEY,
    durable     BOOLEAN NOT NULL,
    exclusive   BOOLEAN NOT NULL,
    auto_delete BOOLEAN NOT NULL,
    arguments   TEXT NOT NULL
  );
  `,
  // The expiry sweep asks which queues have a message whose time-to-live has passed,
  // across all queues at once (maintenance.expiryDue), rather than asking each queue.
  `
  CREATE INDEX messages_ttl ON messages (expires_at) WHERE expires_at IS NOT NULL;
  `,
  // A maintained message count for every queue (issue 19), so depths() reads at most 16
  // rows per queue instead of counting its backlog. Sharded by backend, as queue_stats
  // is, so concurrent sends to one queue do not wait on one row across nodes. Inserts and
  // deletes are counted per statement (transition tables: one upsert per queue per
  // statement, not per row); moves (dead-lettering) per row, as only they change
  // queue_id. A bulk delete (redrive.bulk_delete) subtracts its row count itself
  // (queues.ts). CREATE TRIGGER locks out writers until this step commits, so the
  // backfill below misses no concurrent send.
  `
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
  `,
  // Throughput (issue 19): depths kept per statement (steps.ts, as this file is full).
  DEPTH_PER_STATEMENT,
];
