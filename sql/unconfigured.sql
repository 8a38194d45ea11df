--
-- Preloaded, but snowflake.worker_id is not set: generation refuses with a
-- hint, decoding still works.
--
CREATE EXTENSION snowflake;
SET TimeZone = 'UTC';
SHOW snowflake.worker_id;
SELECT snowflake_nextval();
SELECT snowflake_currval();
SELECT * FROM snowflake_parse(4194304);
SELECT worker_id IS NULL AS worker_unset, ids_issued, last_id, mark_id FROM snowflake_stats;
