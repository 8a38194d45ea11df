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
