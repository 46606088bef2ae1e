import { sqlText, type Migration } from '../migration.js';

/**
 * Versioned schema. Each entry moves the database from version i to i+1 and is never
 * edited once released; a new change is a new entry. PRAGMA user_version records where
 * a database stands.
 */
/**
 * Trigger statements that recompute one FIFO group's row in fifo_groups from its
 * messages: available at the later of its head's visibility and the end of any receipt
 * held on one of its messages. `side` is the trigger's OLD or NEW row.
 */
const recomputeGroup = (side: 'OLD' | 'NEW') => `
    DELETE FROM fifo_groups WHERE queue_id = ${side}.queue_id AND group_id = ${side}.group_id;
    INSERT INTO fifo_groups (queue_id, group_id, available_at, head_seq)
      SELECT ${side}.queue_id, ${side}.group_id,
             max(h.visible_at, coalesce((SELECT max(r.visible_at) FROM messages r
               WHERE r.queue_id = ${side}.queue_id AND r.group_id = ${side}.group_id AND r.receipt_token IS NOT NULL), 0)),
             h.seq
        FROM (SELECT seq, visible_at FROM messages WHERE queue_id = ${side}.queue_id AND group_id = ${side}.group_id
              ORDER BY seq LIMIT 1) h;`;

/**
 * Trigger statements that recompute one FIFO group's row from its first message alone
 * (migration 8 on): the group is available when its head is, and a receive then takes
 * its messages in order up to the first one still invisible, as SQS does.
 */
const refreshHead = (side: 'OLD' | 'NEW') => `
    DELETE FROM fifo_groups WHERE queue_id = ${side}.queue_id AND group_id = ${side}.group_id;
    INSERT INTO fifo_groups (queue_id, group_id, available_at, head_seq)
      SELECT queue_id, group_id, visible_at, seq FROM messages
       WHERE queue_id = ${side}.queue_id AND group_id = ${side}.group_id ORDER BY seq LIMIT 1;`;

export const migrations: Migration[] = [
  `
  CREATE TABLE queues (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id    TEXT NOT NULL,
    name          TEXT NOT NULL,
    fifo          INTEGER NOT NULL,
    attributes    TEXT NOT NULL,
    tags          TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    modified_at   INTEGER NOT NULL,
    last_purge_at INTEGER,
    UNIQUE (account_id, name)
  );
  CREATE TABLE messages (
    seq                INTEGER PRIMARY KEY AUTOINCREMENT,
    queue_id           INTEGER NOT NULL,
    message_id         TEXT NOT NULL,
    body               TEXT NOT NULL,
    attributes         TEXT,
    system_attributes  TEXT,
    md5_body           TEXT NOT NULL,
    md5_attributes     TEXT,
    md5_system         TEXT,
    sender_id          TEXT NOT NULL,
    sent_at            INTEGER NOT NULL,
    visible_at         INTEGER NOT NULL,
    receive_count      INTEGER NOT NULL DEFAULT 0,
    first_received_at  INTEGER,
    received_at        INTEGER,
    receipt_token      TEXT,
    group_id           TEXT,
    dedup_id           TEXT,
    dead_letter_source TEXT
  );
  -- The next visible message is the first entry of this index at or before now.
  CREATE INDEX messages_ready ON messages (queue_id, visible_at, seq);
  -- Retention sweeps and oldest-first moves walk this one.
  CREATE INDEX messages_age ON messages (queue_id, sent_at);
  `,
  `
  -- When the receive path moved the message into a dead-letter queue (selective redrive).
  ALTER TABLE messages ADD COLUMN dead_lettered_at INTEGER;
  -- Counters for metrics, updated in the transaction of the operation they count.
  CREATE TABLE queue_stats (
    queue_id INTEGER PRIMARY KEY,
    sent     INTEGER NOT NULL DEFAULT 0,
    received INTEGER NOT NULL DEFAULT 0,
    deleted  INTEGER NOT NULL DEFAULT 0
  );
  -- Message move tasks (redrive). A task is driven by the node holding its lease.
  CREATE TABLE move_tasks (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL,
    source_queue_id INTEGER NOT NULL,
    source_arn      TEXT NOT NULL,
    destination_arn TEXT,
    max_per_second  INTEGER,
    filter          TEXT,
    status          TEXT NOT NULL,
    failure_reason  TEXT,
    to_move         INTEGER NOT NULL,
    moved           INTEGER NOT NULL DEFAULT 0,
    started_at      INTEGER NOT NULL,
    -- Only messages at positions in (cursor, max_seq] are moved: those present at the start,
    -- so a redriven message that dies again is not picked up by the same task.
    cursor          INTEGER NOT NULL DEFAULT 0,
    max_seq         INTEGER NOT NULL,
    lease_owner     TEXT,
    lease_until     INTEGER NOT NULL DEFAULT 0,
    created_order   INTEGER NOT NULL
  );
  CREATE INDEX move_tasks_source ON move_tasks (source_queue_id, created_order);
  CREATE INDEX move_tasks_status ON move_tasks (status);
  `,
  `
  -- FIFO message groups. A group is available at the later of its head message's
  -- visibility and the end of any receipt still held on one of its messages; triggers
  -- keep this current on every write to messages, whichever code path makes it.
  CREATE TABLE fifo_groups (
    queue_id     INTEGER NOT NULL,
    group_id     TEXT NOT NULL,
    available_at INTEGER NOT NULL,
    head_seq     INTEGER NOT NULL,
    PRIMARY KEY (queue_id, group_id)
  ) WITHOUT ROWID;
  -- The next available group is the first entry at or before now: no scan of the backlog.
  CREATE INDEX fifo_groups_ready ON fifo_groups (queue_id, available_at, head_seq);
  CREATE INDEX messages_group ON messages (queue_id, group_id, seq) WHERE group_id IS NOT NULL;
  CREATE INDEX messages_group_held ON messages (queue_id, group_id, visible_at)
    WHERE group_id IS NOT NULL AND receipt_token IS NOT NULL;
  CREATE TRIGGER messages_group_insert AFTER INSERT ON messages WHEN NEW.group_id IS NOT NULL BEGIN
${recomputeGroup('NEW')}
  END;
  CREATE TRIGGER messages_group_delete AFTER DELETE ON messages WHEN OLD.group_id IS NOT NULL BEGIN
${recomputeGroup('OLD')}
  END;
  CREATE TRIGGER messages_group_update AFTER UPDATE OF queue_id, group_id, visible_at, receipt_token ON messages
    WHEN OLD.group_id IS NOT NULL OR NEW.group_id IS NOT NULL BEGIN
${recomputeGroup('OLD')}
${recomputeGroup('NEW')}
  END;
  -- Deduplication ids seen in the last five minutes, by queue and scope (group or queue).
  CREATE TABLE fifo_dedup (
    queue_id   INTEGER NOT NULL,
    scope      TEXT NOT NULL,
    dedup_id   TEXT NOT NULL,
    message_id TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (queue_id, scope, dedup_id)
  ) WITHOUT ROWID;
  CREATE INDEX fifo_dedup_expiry ON fifo_dedup (expires_at);
  -- ReceiveRequestAttemptId: what an attempt returned, so a retry returns the same.
  CREATE TABLE receive_attempts (
    queue_id   INTEGER NOT NULL,
    attempt_id TEXT NOT NULL,
    receipts   TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (queue_id, attempt_id)
  ) WITHOUT ROWID;
  CREATE INDEX receive_attempts_expiry ON receive_attempts (expires_at);
  `,
  `
  -- Dead-letter history (JSON, newest first) and the moment a message's time-to-live ends.
  ALTER TABLE messages ADD COLUMN deaths TEXT;
  ALTER TABLE messages ADD COLUMN expires_at INTEGER;
  -- The expiry sweep finds due messages here, whatever the backlog.
  CREATE INDEX messages_expiry ON messages (queue_id, expires_at) WHERE expires_at IS NOT NULL;
  -- Depth of the queues that have a length limit, so a send checks the limit without
  -- counting the backlog. A row exists only for such queues (the first limited send
  -- creates it); these triggers keep it exact on every write, whichever path makes it.
  CREATE TABLE queue_depth (
    queue_id INTEGER PRIMARY KEY,
    messages INTEGER NOT NULL,
    bytes    INTEGER NOT NULL
  );
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
  `,
  `
  -- Server secrets shared by every process on this database (the receipt-handle key).
  CREATE TABLE secrets (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
  `
  -- A new message goes to the end of its group (positions only grow), so it changes
  -- nothing of a group that has messages; an empty group has no receipts either, so the
  -- new message alone makes its row.
  DROP TRIGGER messages_group_insert;
  CREATE TRIGGER messages_group_insert AFTER INSERT ON messages WHEN NEW.group_id IS NOT NULL BEGIN
    INSERT OR IGNORE INTO fifo_groups (queue_id, group_id, available_at, head_seq)
      VALUES (NEW.queue_id, NEW.group_id, NEW.visible_at, NEW.seq);
  END;
  -- A receive or a visibility change keeps a message in its group: recompute that group
  -- once, not twice as messages_group_update did for its old and new group alike.
  DROP TRIGGER messages_group_update;
  CREATE TRIGGER messages_group_update AFTER UPDATE OF queue_id, group_id, visible_at, receipt_token ON messages
    WHEN NEW.group_id IS NOT NULL AND OLD.queue_id = NEW.queue_id AND OLD.group_id = NEW.group_id BEGIN
${recomputeGroup('NEW')}
  END;
  CREATE TRIGGER messages_group_move AFTER UPDATE OF queue_id, group_id ON messages
    WHEN (OLD.group_id IS NOT NULL OR NEW.group_id IS NOT NULL)
      AND (OLD.queue_id <> NEW.queue_id OR OLD.group_id IS NOT NEW.group_id) BEGIN
${recomputeGroup('OLD')}
${recomputeGroup('NEW')}
  END;
  `,
  `
  -- A receive (or a longer visibility) holds a message for longer: its group keeps its
  -- head and is available no sooner than that message is, so one row update does. Only
  -- a shorter visibility needs the group recomputed from its messages.
  DROP TRIGGER messages_group_update;
  CREATE TRIGGER messages_group_hold AFTER UPDATE OF visible_at, receipt_token ON messages
    WHEN NEW.group_id IS NOT NULL AND OLD.queue_id = NEW.queue_id AND OLD.group_id = NEW.group_id
      AND NEW.receipt_token IS NOT NULL AND NEW.visible_at >= OLD.visible_at BEGIN
    UPDATE fifo_groups SET available_at = max(available_at, NEW.visible_at)
      WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id;
  END;
  CREATE TRIGGER messages_group_update AFTER UPDATE OF queue_id, group_id, visible_at, receipt_token ON messages
    WHEN NEW.group_id IS NOT NULL AND OLD.queue_id = NEW.queue_id AND OLD.group_id = NEW.group_id
      AND NOT (NEW.receipt_token IS NOT NULL AND NEW.visible_at >= OLD.visible_at) BEGIN
${recomputeGroup('NEW')}
  END;
  `,
  `
  -- A FIFO group is available as soon as its first message is visible: messages behind
  -- it that are still in flight stop a receive there, but no longer hold the whole group
  -- (issue 16). Only the head's visibility matters now, so a visibility change updates
  -- the row only when it is the head's, and receipts are no longer looked at.
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
${refreshHead('OLD')}
  END;
  CREATE TRIGGER messages_group_move AFTER UPDATE OF queue_id, group_id ON messages
    WHEN (OLD.group_id IS NOT NULL OR NEW.group_id IS NOT NULL)
      AND (OLD.queue_id <> NEW.queue_id OR OLD.group_id IS NOT NEW.group_id) BEGIN
${refreshHead('OLD')}
${refreshHead('NEW')}
  END;
  DELETE FROM fifo_groups;
  INSERT INTO fifo_groups (queue_id, group_id, available_at, head_seq)
    SELECT m.queue_id, m.group_id, m.visible_at, m.seq FROM messages m
      JOIN (SELECT min(seq) AS seq FROM messages WHERE group_id IS NOT NULL GROUP BY queue_id, group_id) h ON h.seq = m.seq;
  `,
  `
  -- The console's extensions (docs/extensions.md), in one step.
  -- GetQueueActivity: each queue's counts per minute, added by the counters of each
  -- commit (counters.ts), and its depth at the end of the minute (activity-sampler.ts).
  CREATE TABLE queue_activity (
    queue_id      INTEGER NOT NULL,
    minute        INTEGER NOT NULL,
    sent          INTEGER NOT NULL DEFAULT 0,
    received      INTEGER NOT NULL DEFAULT 0,
    deleted       INTEGER NOT NULL DEFAULT 0,
    dead_lettered INTEGER NOT NULL DEFAULT 0,
    depth         INTEGER,
    PRIMARY KEY (queue_id, minute)
  ) WITHOUT ROWID;
  CREATE INDEX queue_activity_minute ON queue_activity (minute);
  -- GetDeadLetterBreakdown groups a DLQ's messages by source and latest death reason
  -- in one pass over this partial index, never reading a message; DeleteMessagesById
  -- finds dead-lettered messages by id in the second. Sends write neither (no source).
  -- The reason of the latest death, kept by triggers from the history (whichever path
  -- writes it), as a real column: a generated one would keep the index from covering.
  ALTER TABLE messages ADD COLUMN death_reason TEXT;
  UPDATE messages SET death_reason = json_extract(deaths, '$[0].reason') WHERE deaths IS NOT NULL;
  CREATE TRIGGER messages_death_reason_insert AFTER INSERT ON messages WHEN NEW.deaths IS NOT NULL BEGIN
    UPDATE messages SET death_reason = json_extract(NEW.deaths, '$[0].reason') WHERE seq = NEW.seq;
  END;
  CREATE TRIGGER messages_death_reason_update AFTER UPDATE OF deaths ON messages WHEN NEW.deaths IS NOT OLD.deaths BEGIN
    UPDATE messages SET death_reason = json_extract(NEW.deaths, '$[0].reason') WHERE seq = NEW.seq;
  END;
  CREATE INDEX messages_dead_letter ON messages (queue_id, dead_letter_source, death_reason, dead_lettered_at)
    WHERE dead_letter_source IS NOT NULL;
  CREATE INDEX messages_dead_letter_id ON messages (queue_id, message_id) WHERE dead_letter_source IS NOT NULL;
  -- PeekMessages (and move tasks) walk a queue by position: without this index SQLite read
  -- every message of the queue by age and sorted them for each page (70 ms a page of a
  -- million-message queue). Positions only grow, so each send appends at the end of its
  -- queue's range. PostgreSQL has had it from the start (messages_position).
  CREATE INDEX messages_position ON messages (queue_id, seq);
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
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
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
  `
  -- The expiry sweep asks which queues have a message whose time-to-live has passed,
  -- across all queues at once (maintenance.expiryDue), rather than asking each queue.
  CREATE INDEX messages_ttl ON messages (expires_at) WHERE expires_at IS NOT NULL;
  `,
  (defaultRegion) => `
  -- Regions (docs/regions.md): a queue's key becomes (account, region, name). The UNIQUE
  -- constraint of step 1 cannot be dropped in SQLite, so the table is rebuilt; queue ids
  -- stay as they were, and so does the AUTOINCREMENT high-water mark, so no id of a
  -- deleted queue is ever handed out again.
  CREATE TABLE queues_regional (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id    TEXT NOT NULL,
    region        TEXT NOT NULL,
    name          TEXT NOT NULL,
    fifo          INTEGER NOT NULL,
    attributes    TEXT NOT NULL,
    tags          TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    modified_at   INTEGER NOT NULL,
    last_purge_at INTEGER,
    UNIQUE (account_id, region, name)
  );
  INSERT INTO queues_regional (id, account_id, region, name, fifo, attributes, tags, created_at, modified_at, last_purge_at)
    SELECT id, account_id, ${sqlText(defaultRegion)}, name, fifo, attributes, tags, created_at, modified_at, last_purge_at FROM queues;
  DELETE FROM sqlite_sequence WHERE name = 'queues_regional';
  INSERT INTO sqlite_sequence (name, seq) SELECT 'queues_regional', seq FROM sqlite_sequence WHERE name = 'queues';
  DROP TABLE queues;
  ALTER TABLE queues_regional RENAME TO queues;
  `,
  `
  -- Runtime policies, set through the management API (/api/policies), per account.
  CREATE TABLE policies (
    account_id TEXT NOT NULL,
    name       TEXT NOT NULL,
    pattern    TEXT NOT NULL,
    apply_to   TEXT NOT NULL,
    priority   INTEGER NOT NULL,
    definition TEXT NOT NULL,
    PRIMARY KEY (account_id, name)
  );
  `,
  `
  -- One count per event (docs/monitoring.md): GetQueueActivity's counts are the engine's
  -- (activity-counts.ts), added once a second; they gain the messages that arrived in the
  -- queue by dead-lettering. The per-queue totals each operation kept in its own
  -- transaction had no reader: they go.
  ALTER TABLE queue_activity ADD COLUMN dead_letter_arrivals INTEGER NOT NULL DEFAULT 0;
  DROP TABLE queue_stats;
  `,
];
