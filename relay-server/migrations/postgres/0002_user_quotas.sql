-- Per-user quotas: each conversation records the byte size of its context, and `user_usage` keeps each
-- user's conversation count and total context bytes, updated in the same transaction as the conversation
-- (its row lock serialises concurrent writers of one user), so a quota check reads one row instead of
-- summing every conversation of the user.
ALTER TABLE conversations ADD COLUMN context_bytes BIGINT NOT NULL DEFAULT 0;
UPDATE conversations SET context_bytes = OCTET_LENGTH(context);
CREATE TABLE user_usage (
    user_id       TEXT   NOT NULL PRIMARY KEY,
    conversations BIGINT NOT NULL,
    bytes         BIGINT NOT NULL
);
INSERT INTO user_usage (user_id, conversations, bytes)
    SELECT user_id, COUNT(*), SUM(context_bytes) FROM conversations GROUP BY user_id;
