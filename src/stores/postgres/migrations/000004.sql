-- A purge or a queue deletion deletes all of a queue's messages at once. It sets
-- redrive.bulk_delete for its transaction and then rebuilds the queue's groups and depth
-- itself (deleteAllMessages in queues.ts), so the per-row delete triggers skip its rows
-- rather than run once per deleted message.

DROP TRIGGER messages_depth_delete ON messages;
CREATE TRIGGER messages_depth_delete AFTER DELETE ON messages
  FOR EACH ROW WHEN (current_setting('redrive.bulk_delete', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION redrive_depth_removed();
DROP TRIGGER messages_group_delete ON messages;
CREATE TRIGGER messages_group_delete AFTER DELETE ON messages
  FOR EACH ROW WHEN (OLD.group_id IS NOT NULL AND current_setting('redrive.bulk_delete', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION redrive_group_deleted();
