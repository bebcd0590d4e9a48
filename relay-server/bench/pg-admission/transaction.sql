-- pgbench: one call's spending counters as the relay wrote them on PostgreSQL before migration 0005 (the
-- default limits' shape: a 60 s and a day sliding window, concurrency): the admission transaction (9 round
-- trips) then the settlement transaction (8). See admit-pgbench.sh.
\set u random(1, :nusers)
\set now random(1800000000, 1800000059)
BEGIN;
SELECT pg_advisory_xact_lock(hashtext('patchbridge-spending'), hashtext('u' || :u));
SELECT scope, slice_seconds, slice_start, calls, input_tokens, output_tokens FROM spending_usage WHERE user_id = 'u' || :u AND slice_seconds = 1 AND slice_start >= :now - 59;
SELECT scope, slice_seconds, slice_start, calls, input_tokens, output_tokens FROM spending_usage WHERE user_id = 'u' || :u AND slice_seconds = 1440 AND slice_start >= :now - 86400;
SELECT model, COUNT(*) FROM spending_calls WHERE user_id = 'u' || :u AND lease_until > :now GROUP BY model ORDER BY model;
INSERT INTO spending_usage (user_id, scope, slice_seconds, slice_start, calls, input_tokens, output_tokens) VALUES ('u' || :u, '', 1, :now, 1, 0, 0) ON CONFLICT (user_id, scope, slice_seconds, slice_start) DO UPDATE SET calls = spending_usage.calls + 1, input_tokens = spending_usage.input_tokens + 0, output_tokens = spending_usage.output_tokens + 0;
INSERT INTO spending_usage (user_id, scope, slice_seconds, slice_start, calls, input_tokens, output_tokens) VALUES ('u' || :u, '', 1440, :now - :now % 1440, 1, 0, 0) ON CONFLICT (user_id, scope, slice_seconds, slice_start) DO UPDATE SET calls = spending_usage.calls + 1, input_tokens = spending_usage.input_tokens + 0, output_tokens = spending_usage.output_tokens + 0;
INSERT INTO spending_calls (call_id, user_id, model, lease_until, instance_id) VALUES ('c' || :client_id, 'u' || :u, 'scripted', :now + 60, 'i');
COMMIT;
BEGIN;
DELETE FROM spending_calls WHERE call_id = 'c' || :client_id;
DELETE FROM spending_calls WHERE user_id = 'u' || :u AND lease_until <= :now;
INSERT INTO spending_usage (user_id, scope, slice_seconds, slice_start, calls, input_tokens, output_tokens) VALUES ('u' || :u, '', 1, :now, 0, 10, 5) ON CONFLICT (user_id, scope, slice_seconds, slice_start) DO UPDATE SET calls = spending_usage.calls + 0, input_tokens = spending_usage.input_tokens + 10, output_tokens = spending_usage.output_tokens + 5;
INSERT INTO spending_usage (user_id, scope, slice_seconds, slice_start, calls, input_tokens, output_tokens) VALUES ('u' || :u, '', 1440, :now - :now % 1440, 0, 10, 5) ON CONFLICT (user_id, scope, slice_seconds, slice_start) DO UPDATE SET calls = spending_usage.calls + 0, input_tokens = spending_usage.input_tokens + 10, output_tokens = spending_usage.output_tokens + 5;
DELETE FROM spending_usage WHERE user_id = 'u' || :u AND slice_seconds = 1 AND slice_start < :now - 59;
DELETE FROM spending_usage WHERE user_id = 'u' || :u AND slice_seconds = 1440 AND slice_start < :now - 86400;
COMMIT;
