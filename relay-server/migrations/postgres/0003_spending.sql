-- Spending limits: each user's model calls and tokens, in slices of time per scope (`''` for all models, else
-- a model id) and slice length (a fixed window is one slice, a sliding window sixty), and the calls running now
-- (each with a lease, so a relay that died mid-call cannot leave its user counted as running).
CREATE TABLE spending_usage (
    user_id       TEXT    NOT NULL,
    scope         TEXT    NOT NULL,
    slice_seconds BIGINT  NOT NULL,
    slice_start   BIGINT  NOT NULL,
    calls         BIGINT  NOT NULL,
    input_tokens  BIGINT  NOT NULL,
    output_tokens BIGINT  NOT NULL,
    PRIMARY KEY (user_id, scope, slice_seconds, slice_start)
);
CREATE TABLE spending_calls (
    call_id     TEXT    NOT NULL PRIMARY KEY,
    user_id     TEXT    NOT NULL,
    model       TEXT    NOT NULL,
    lease_until BIGINT  NOT NULL
);
CREATE INDEX spending_calls_by_user ON spending_calls (user_id, lease_until);
