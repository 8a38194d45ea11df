--
-- Not in shared_preload_libraries: the extension installs, and every
-- function refuses with a hint instead of crashing, except the base32 pair
-- and the column type's, which need no settings, and the registry table
-- with its guard.
--
CREATE EXTENSION snowflake;
-- the PL/pgSQL and SQL functions would add CONTEXT lines naming themselves
\set SHOW_CONTEXT never
SELECT snowflake_nextval();
SELECT * FROM snowflake_nextval(3);
SELECT * FROM snowflake_nextval(0);
SELECT snowflake_currval();
SELECT snowflake_parse(1);
SELECT 1 AS still_connected;
SELECT * FROM snowflake_stats;
SELECT snowflake_stats_reset();

-- the time helpers
SELECT snowflake_to_timestamptz(4194304000);
SELECT snowflake_min_id('2025-01-01 00:00:01+00');
SELECT snowflake_max_id('2025-01-01 00:00:01+00');
SELECT snowflake_compose('2025-01-01 00:00:01+00', 5, 7);
SELECT snowflake_in_range(4194304000, '[2025-01-01 00:00:01+00,)');
SELECT snowflake_range_min_id('[2025-01-01 00:00:01+00,)');
SELECT snowflake_range_max_id('[2025-01-01 00:00:01+00,)');
-- <@ with a constant range is rewritten, and refuses, while planning; with
-- a range from a column it refuses when the executor computes the bounds
SELECT 4194304000 <@ tstzrange('2025-01-01 00:00:01+00', NULL);
CREATE TABLE ranges (r tstzrange);
INSERT INTO ranges VALUES ('[2025-01-01 00:00:01+00,)');
SELECT count(*) FROM ranges WHERE 4194304000 <@ r;
SELECT count(*) FROM ranges WHERE snowflake_in_range(4194304000, r);
DROP TABLE ranges;
SELECT 1 AS still_connected;

-- the base32 text form works: it does not depend on the layout
SELECT snowflake_encode(250099318017519616);
SELECT snowflake_decode('06y4804rg0w00');
SELECT snowflake_decode(snowflake_encode(9223372036854775807)) = 9223372036854775807 AS round_trip;
SELECT snowflake_decode('8000000000000');

-- so does the column type, which does not depend on the layout either
SELECT '250592571728859136'::snowflake AS id, to_json('250592571728859136'::snowflake) AS json;
SELECT '-1'::snowflake;

-- the registry functions refuse; the table and its guard work without the
-- library, so a central registry can live here
SELECT * FROM snowflake_worker_identity();
SELECT snowflake_check_worker();
SELECT * FROM snowflake_register_worker('here');
INSERT INTO snowflake.workers (worker_id, system_identifier, host, first_seen)
VALUES (5, 1, 'node-a', '2025-01-01 00:00:00+00');
INSERT INTO snowflake.workers (worker_id, system_identifier, host)
VALUES (5, 1, 'node-a again');
INSERT INTO snowflake.workers (worker_id, system_identifier, host)
VALUES (5, 2, 'node-b');
SELECT worker_id, system_identifier, host FROM snowflake.workers;

-- snowflake_migrate() refuses before changing anything, dry run or not
CREATE TABLE t (id bigserial PRIMARY KEY);
SELECT * FROM snowflake_migrate('t', dry_run => true);
SELECT * FROM snowflake_migrate('t');
SELECT pg_get_expr(adbin, adrelid) AS "default" FROM pg_attrdef WHERE adrelid = 't'::regclass;
DROP TABLE t;
