/* snowflake--1.0--1.1.sql */

\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.1'" to load this file. \quit

-- Batch generation (issue 6)

CREATE FUNCTION snowflake_nextval(n integer)
RETURNS SETOF bigint
AS 'MODULE_PATHNAME', 'snowflake_nextval_batch'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE ROWS 1000;

COMMENT ON FUNCTION snowflake_nextval(integer) IS
'Returns n new IDs, in increasing order, reserved under one acquisition of the generator''s lock; for bulk loads';

-- Generator state and counters (issue 3)

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
AS 'MODULE_PATHNAME', 'snowflake_stats'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_stats() IS
'Returns the generator''s settings, state and counters since the server started or the counters were reset';

CREATE VIEW snowflake_stats AS
    SELECT * FROM snowflake_stats();

COMMENT ON VIEW snowflake_stats IS
'One row: the generator''s settings, state and counters';

GRANT SELECT ON snowflake_stats TO PUBLIC;

CREATE FUNCTION snowflake_stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'snowflake_stats_reset'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_stats_reset() IS
'Resets the counters shown by snowflake_stats; allowed to superusers and to roles granted EXECUTE';

REVOKE ALL ON FUNCTION snowflake_stats_reset() FROM PUBLIC;
