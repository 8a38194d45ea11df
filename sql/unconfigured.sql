--
-- Preloaded, but snowflake.worker_id is not set: generation refuses with a
-- hint, decoding still works.
--
CREATE EXTENSION snowflake;
SET TimeZone = 'UTC';
SHOW snowflake.worker_id;
SELECT snowflake_nextval();
SELECT * FROM snowflake_nextval(0);
SELECT snowflake_currval();
SELECT * FROM snowflake_parse(4194304);
SELECT worker_id IS NULL AS worker_unset, ids_issued, last_id, mark_id FROM snowflake_stats;

-- snowflake_migrate() refuses before changing anything, dry run or not
\set SHOW_CONTEXT never
CREATE TABLE t (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY);
SELECT * FROM snowflake_migrate('t', dry_run => true);
SELECT * FROM snowflake_migrate('t');
SELECT attidentity FROM pg_attribute WHERE attrelid = 't'::regclass AND attname = 'id';
DROP TABLE t;
