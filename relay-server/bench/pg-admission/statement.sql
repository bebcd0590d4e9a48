-- pgbench: the same call's counters as the relay writes them since migration 0005: one statement to admit,
-- one to settle (the limits as the relay passes them for the default shape, raised). See admit-pgbench.sh.
\set u random(1, :nusers)
\set now random(1800000000, 1800000059)
SELECT admitted FROM patchbridge_admit('u' || :u, 'c' || :client_id, 'i', 'scripted', :now, :now + 60, ARRAY['', '']::text[], ARRAY[1, 1440]::bigint[], ARRAY[:now - 59, :now - :now % 1440 - 84960]::bigint[], ARRAY[1000000000000, 1000000000000]::bigint[], ARRAY[NULL, 1000000000000]::bigint[], ARRAY[NULL, 1000000000000]::bigint[], ARRAY['']::text[], ARRAY[1000000]::bigint[], ARRAY['', '']::text[], ARRAY[1, 1440]::bigint[], ARRAY[:now, :now - :now % 1440]::bigint[], ARRAY[1, 1440]::bigint[], ARRAY[:now - 59, :now - 86400]::bigint[], true);
SELECT patchbridge_settle('u' || :u, 'c' || :client_id, :now, ARRAY['', '']::text[], ARRAY[1, 1440]::bigint[], ARRAY[:now, :now - :now % 1440]::bigint[], 10, 5, ARRAY[1, 1440]::bigint[], ARRAY[:now - 59, :now - 86400]::bigint[]);
