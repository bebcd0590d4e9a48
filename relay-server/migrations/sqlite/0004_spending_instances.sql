-- Spending limits: a running call's mark names the relay instance that runs it (a random id chosen at each
-- start), which renews the marks of its calls while they stream; a mark not renewed expires within a minute.
ALTER TABLE spending_calls ADD COLUMN instance_id TEXT NOT NULL DEFAULT '';
CREATE INDEX spending_calls_by_instance ON spending_calls (instance_id);
