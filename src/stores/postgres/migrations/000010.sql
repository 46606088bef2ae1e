-- Regions (docs/regions.md): a queue's key becomes (account, region, name); the queues
-- that existed move into the default region (the server's --region at this step).
ALTER TABLE queues ADD COLUMN region TEXT COLLATE "C" NOT NULL DEFAULT :'default_region';
ALTER TABLE queues ALTER COLUMN region DROP DEFAULT;
ALTER TABLE queues DROP CONSTRAINT queues_account_id_name_key;
ALTER TABLE queues ADD CONSTRAINT queues_account_region_name_key UNIQUE (account_id, region, name);
