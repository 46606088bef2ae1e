-- The expiry sweep asks which queues have a message whose time-to-live has passed,
-- across all queues at once (expiryDue in maintenance.ts), rather than asking each queue.

CREATE INDEX messages_ttl ON messages (expires_at) WHERE expires_at IS NOT NULL;
