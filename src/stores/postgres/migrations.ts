import { sqlText, type Migration } from '../migration.js';
import { firstSteps } from './migrations-first.js';
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
export const migrations: Migration[] = [
  // Steps 1 and 2, the schema the store started with (migrations-first.ts).
  ...firstSteps,
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
  (defaultRegion) => `
  -- Regions (docs/regions.md): a queue's key becomes (account, region, name); the queues
  -- that existed move into the default region (the server's --region at this step).
  ALTER TABLE queues ADD COLUMN region TEXT COLLATE "C" NOT NULL DEFAULT ${sqlText(defaultRegion)};
  ALTER TABLE queues ALTER COLUMN region DROP DEFAULT;
  ALTER TABLE queues DROP CONSTRAINT queues_account_id_name_key;
  ALTER TABLE queues ADD CONSTRAINT queues_account_region_name_key UNIQUE (account_id, region, name);
  `,
  `
  -- Runtime policies, set through the management API (/api/policies), per account.
  CREATE TABLE policies (
    account_id TEXT NOT NULL, name TEXT NOT NULL, pattern TEXT NOT NULL, apply_to TEXT NOT NULL,
    priority INTEGER NOT NULL, definition TEXT NOT NULL, PRIMARY KEY (account_id, name)
  );
  `,
  // Throughput (issue 19): depths kept per statement (steps.ts).
  DEPTH_PER_STATEMENT,
  `
  -- One count per event (docs/monitoring.md): GetQueueActivity's counts are the engine's
  -- (activity-counts.ts), added once a second; they gain the messages that arrived in the
  -- queue by dead-lettering. The per-queue totals each operation kept in its own
  -- transaction had no reader: they go.
  ALTER TABLE queue_activity ADD COLUMN dead_letter_arrivals BIGINT NOT NULL DEFAULT 0;
  DROP TABLE queue_stats;
  `,
];
