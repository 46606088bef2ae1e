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
  SELECT id, account_id, :'default_region', name, fifo, attributes, tags, created_at, modified_at, last_purge_at FROM queues;
DELETE FROM sqlite_sequence WHERE name = 'queues_regional';
INSERT INTO sqlite_sequence (name, seq) SELECT 'queues_regional', seq FROM sqlite_sequence WHERE name = 'queues';
DROP TABLE queues;
ALTER TABLE queues_regional RENAME TO queues;
