-- A queue's positions serve its age (docs/architecture.md, Stores): sent_at does not
-- decrease along a queue's positions (every insert takes the next position at its node's
-- current time; a standard dead-letter keeps both from its first send), so the retention
-- sweep and the oldest message's age read messages_position, and a send, a claim and a
-- delete no longer write an index of their own for them. Across nodes, the order holds
-- within the nodes' clock skew.
DROP INDEX messages_age;
