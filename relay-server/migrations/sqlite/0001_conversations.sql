-- Conversations stored whole, by revision. `context` is the ConversationContext JSON text, stored verbatim.
-- Timestamps are unix microseconds.
CREATE TABLE conversations (
    user_id    TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    title      TEXT    NOT NULL,
    revision   INTEGER NOT NULL,
    context    TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, id)
);
CREATE INDEX conversations_by_user_updated ON conversations (user_id, updated_at DESC, id DESC);
