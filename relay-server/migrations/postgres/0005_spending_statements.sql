-- Spending limits on replicas: an admission and a settlement are one statement each (one round trip), run by
-- these two functions (`src/store/spending_pg.rs` calls them; docs/adr/013).
--
-- `patchbridge_admit` takes the user's transaction-scoped advisory lock (the same key the earlier transaction
-- took, so replicas of either version serialise one user's admissions together), checks every limit of the
-- call's model, and, when none is reached, counts the call and writes its running mark; the statement's implicit
-- transaction ends, and the lock with it, when the call returns. The limits are parameters: the relay derives
-- them from its configured rules (`spending/policy.rs`) at each call, including each window's oldest slice, so
-- this function holds no rule data of its own. Its decision is policy.rs's `Policy::refusal(...).is_none()`:
--   - a window refuses when, over the user's slices of its scope and slice length from its oldest slice up to
--     `now`, the sum of a column it limits (calls, input or output tokens) is at least that limit;
--   - a concurrency limit refuses when the user's marks with a lease after `now` (of any model for the limits
--     of all models, `''`; else of that model) are at least that limit.
-- `tests/spending_pg_rule.rs` feeds both the same random usage and limits and requires the same answer.
--
-- Refused, nothing is written and the usage the rules read is returned (per slice length, the slices from its
-- horizon on; the running marks by model when `read_running`), so the relay names the limit and its retry time
-- from the very rows that refused the call.
CREATE FUNCTION patchbridge_admit(
    p_user TEXT,
    p_call TEXT,
    p_instance TEXT,
    p_model TEXT,
    p_now BIGINT,
    p_lease_until BIGINT,
    -- One element per window of the call's scopes: scope, slice length, oldest slice counted, and each limit
    -- (NULL: not limited).
    w_scope TEXT[],
    w_len BIGINT[],
    w_since BIGINT[],
    w_calls BIGINT[],
    w_input BIGINT[],
    w_output BIGINT[],
    -- One element per concurrency limit: scope (`''` for all models) and limit.
    c_scope TEXT[],
    c_max BIGINT[],
    -- The slices the call is counted in: scope, slice length, slice start.
    r_scope TEXT[],
    r_len BIGINT[],
    r_start BIGINT[],
    -- What a refusal returns: per slice length its horizon, and whether the running marks are read.
    h_len BIGINT[],
    h_since BIGINT[],
    read_running BOOLEAN,
    OUT admitted BOOLEAN,
    OUT u_scope TEXT[],
    OUT u_len BIGINT[],
    OUT u_start BIGINT[],
    OUT u_calls BIGINT[],
    OUT u_input BIGINT[],
    OUT u_output BIGINT[],
    OUT m_model TEXT[],
    OUT m_running BIGINT[]
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    i INT;
    used_calls NUMERIC;
    used_input NUMERIC;
    used_output NUMERIC;
    running BIGINT;
BEGIN
    -- The counters' commit does not wait for the WAL flush (this transaction only): like the SQLite counters'
    -- writes, which take no fsync of their own, a crash of the database server may set them back by their last
    -- moments (at most 3 x wal_writer_delay, 0.6 s by default); the lock is not held through an fsync.
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM pg_advisory_xact_lock(hashtext('patchbridge-spending'), hashtext(p_user));
    admitted := TRUE;
    -- Each window reads only its own slices (one index range: user, scope, slice length, start). Simple
    -- statements in a loop rather than one join over the arrays: their plans are cached once per connection
    -- (a join over parameter arrays is planned again at every call, which costs more than it runs).
    FOR i IN 1 .. coalesce(array_length(w_scope, 1), 0) LOOP
        SELECT coalesce(sum(u.calls), 0), coalesce(sum(u.input_tokens), 0),
               coalesce(sum(u.output_tokens), 0)
        INTO used_calls, used_input, used_output
        FROM spending_usage u
        WHERE u.user_id = p_user AND u.scope = w_scope[i] AND u.slice_seconds = w_len[i]
          AND u.slice_start >= w_since[i] AND u.slice_start <= p_now;
        IF used_calls >= w_calls[i] OR used_input >= w_input[i] OR used_output >= w_output[i] THEN
            admitted := FALSE;
            EXIT;
        END IF;
    END LOOP;
    IF admitted THEN
        FOR i IN 1 .. coalesce(array_length(c_scope, 1), 0) LOOP
            SELECT count(*) INTO running FROM spending_calls m
            WHERE m.user_id = p_user AND m.lease_until > p_now
              AND (c_scope[i] = '' OR m.model = c_scope[i]);
            IF running >= c_max[i] THEN
                admitted := FALSE;
                EXIT;
            END IF;
        END LOOP;
    END IF;

    IF admitted THEN
        INSERT INTO spending_usage
            (user_id, scope, slice_seconds, slice_start, calls, input_tokens, output_tokens)
        SELECT p_user, r.scope, r.len, r.start, 1, 0, 0
        FROM unnest(r_scope, r_len, r_start) AS r(scope, len, start)
        ON CONFLICT (user_id, scope, slice_seconds, slice_start)
        DO UPDATE SET calls = spending_usage.calls + 1;
        INSERT INTO spending_calls (call_id, user_id, model, lease_until, instance_id)
        VALUES (p_call, p_user, p_model, p_lease_until, p_instance);
        RETURN;
    END IF;

    SELECT array_agg(u.scope ORDER BY u.slice_seconds, u.scope, u.slice_start),
           array_agg(u.slice_seconds ORDER BY u.slice_seconds, u.scope, u.slice_start),
           array_agg(u.slice_start ORDER BY u.slice_seconds, u.scope, u.slice_start),
           array_agg(u.calls ORDER BY u.slice_seconds, u.scope, u.slice_start),
           array_agg(u.input_tokens ORDER BY u.slice_seconds, u.scope, u.slice_start),
           array_agg(u.output_tokens ORDER BY u.slice_seconds, u.scope, u.slice_start)
    INTO u_scope, u_len, u_start, u_calls, u_input, u_output
    FROM unnest(h_len, h_since) AS h(len, since)
    JOIN spending_usage u ON u.slice_seconds = h.len AND u.slice_start >= h.since
    WHERE u.user_id = p_user;
    IF read_running THEN
        SELECT array_agg(r.model ORDER BY r.model), array_agg(r.n ORDER BY r.model)
        INTO m_model, m_running
        FROM (SELECT m.model, count(*) AS n FROM spending_calls m
              WHERE m.user_id = p_user AND m.lease_until > p_now GROUP BY m.model) r;
    END IF;
END
$$;

-- A call's end in one statement: its mark ends (and the user's marks whose relay died, off the next admission),
-- its tokens are added to the slices `now` falls in, and the user's slices no window reads any more are
-- deleted. No lock: it only adds to counters (one upsert per slice) and deletes marks. Committed without waiting
-- for the WAL flush, as an admission is.
CREATE FUNCTION patchbridge_settle(
    p_user TEXT,
    p_call TEXT,
    p_now BIGINT,
    s_scope TEXT[],
    s_len BIGINT[],
    s_start BIGINT[],
    p_input BIGINT,
    p_output BIGINT,
    h_len BIGINT[],
    h_before BIGINT[]
) RETURNS VOID LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    DELETE FROM spending_calls WHERE call_id = p_call;
    DELETE FROM spending_calls WHERE user_id = p_user AND lease_until <= p_now;
    IF p_input <> 0 OR p_output <> 0 THEN
        INSERT INTO spending_usage
            (user_id, scope, slice_seconds, slice_start, calls, input_tokens, output_tokens)
        SELECT p_user, s.scope, s.len, s.start, 0, p_input, p_output
        FROM unnest(s_scope, s_len, s_start) AS s(scope, len, start)
        ON CONFLICT (user_id, scope, slice_seconds, slice_start)
        DO UPDATE SET input_tokens = spending_usage.input_tokens + p_input,
                      output_tokens = spending_usage.output_tokens + p_output;
    END IF;
    DELETE FROM spending_usage u
    USING unnest(h_len, h_before) AS h(len, before)
    WHERE u.user_id = p_user AND u.slice_seconds = h.len AND u.slice_start < h.before;
END
$$;
