-- The tables the SQLite store starts with. Times are milliseconds since the epoch, as
-- the engine's clock gives them.

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
