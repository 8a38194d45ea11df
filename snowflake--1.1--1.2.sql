/* snowflake--1.1--1.2.sql */

\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.2'" to load this file. \quit

-- snowflake_stats gains largest_drift_ms: how far ahead of the clock IDs
-- have run since the counters were reset, the number to compare with
-- snowflake.max_drift.  Its columns change, so the function and the view
-- over it are made anew.

DROP VIEW snowflake_stats;
DROP FUNCTION snowflake_stats();

CREATE FUNCTION snowflake_stats(
    OUT worker_id integer,
    OUT epoch timestamptz,
    OUT timestamp_bits integer,
    OUT worker_bits integer,
    OUT sequence_bits integer,
    OUT lifetime_end timestamptz,
    OUT ids_issued bigint,
    OUT last_id bigint,
    OUT drift_ms bigint,
    OUT largest_drift_ms bigint,
    OUT mark_id bigint,
    OUT mark_time timestamptz,
    OUT marks_written bigint,
    OUT clock_rollbacks bigint,
    OUT largest_rollback_ms bigint,
    OUT borrows bigint,
    OUT waits bigint,
    OUT wait_time_ms double precision,
    OUT refusals bigint,
    OUT stats_reset timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_stats_1_2'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_stats() IS
'Returns the generator''s settings, state and counters since the server started or the counters were reset';

CREATE VIEW snowflake_stats AS
    SELECT * FROM snowflake_stats();

COMMENT ON VIEW snowflake_stats IS
'One row: the generator''s settings, state and counters';

GRANT SELECT ON snowflake_stats TO PUBLIC;
