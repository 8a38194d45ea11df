--
-- Not in shared_preload_libraries: the extension installs, and every
-- function refuses with a hint instead of crashing.
--
CREATE EXTENSION snowflake;
SELECT snowflake_nextval();
SELECT snowflake_currval();
SELECT snowflake_parse(1);
SELECT 1 AS still_connected;
SELECT * FROM snowflake_stats;
SELECT snowflake_stats_reset();

-- snowflake_migrate() refuses before changing anything, dry run or not
\set SHOW_CONTEXT never
CREATE TABLE t (id bigserial PRIMARY KEY);
SELECT * FROM snowflake_migrate('t', dry_run => true);
SELECT * FROM snowflake_migrate('t');
SELECT pg_get_expr(adbin, adrelid) AS "default" FROM pg_attrdef WHERE adrelid = 't'::regclass;
DROP TABLE t;
