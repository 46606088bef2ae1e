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
