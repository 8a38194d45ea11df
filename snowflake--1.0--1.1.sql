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

-- Time helpers (issue 4)

CREATE FUNCTION snowflake_to_timestamptz(id bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'snowflake_to_timestamptz'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_to_timestamptz(bigint) IS
'Returns the instant (to the millisecond) an ID was created, under the server''s layout and epoch';

CREATE FUNCTION snowflake_min_id(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_min_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_min_id(timestamptz) IS
'Returns the smallest ID any worker could issue in the millisecond of the given instant';

CREATE FUNCTION snowflake_max_id(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_max_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_max_id(timestamptz) IS
'Returns the largest ID any worker could issue in the millisecond of the given instant';

CREATE FUNCTION snowflake_compose(created_at timestamptz,
                                  worker_id integer,
                                  sequence integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_compose_sql'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_compose(timestamptz, integer, integer) IS
'Builds the ID with the given creation time (rounded down to the millisecond), worker id and sequence number, refusing parts that do not fit the layout';

CREATE FUNCTION snowflake_range_min_id(range tstzrange)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_range_min_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_range_min_id(tstzrange) IS
'Returns the smallest ID whose creation time lies in the range, clamped to the layout''s lifetime; 0 if no ID can (then snowflake_range_max_id returns -1)';

CREATE FUNCTION snowflake_range_max_id(range tstzrange)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_range_max_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_range_max_id(tstzrange) IS
'Returns the largest ID whose creation time lies in the range, clamped to the layout''s lifetime; -1 if no ID can';

CREATE FUNCTION snowflake_in_range_support(internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'snowflake_in_range_support'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_in_range_support(internal) IS
'Planner support for the bigint <@ tstzrange operator: rewrites it into bigint comparisons that indexes and partition pruning use';

CREATE FUNCTION snowflake_in_range(id bigint, range tstzrange)
RETURNS boolean
AS 'MODULE_PATHNAME', 'snowflake_in_range'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@.snowflake_in_range_support;

COMMENT ON FUNCTION snowflake_in_range(bigint, tstzrange) IS
'Tells whether the creation time of an ID lies in the range; negative numbers are not IDs and lie in no range';

CREATE OPERATOR <@ (
    LEFTARG = bigint,
    RIGHTARG = tstzrange,
    FUNCTION = @extschema@.snowflake_in_range
);

COMMENT ON OPERATOR <@ (bigint, tstzrange) IS
'ID was created within the time range';

CREATE FUNCTION snowflake_encode(id bigint)
RETURNS text
AS 'MODULE_PATHNAME', 'snowflake_encode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_encode(bigint) IS
'Returns an ID as 13 uppercase Crockford base32 characters, which sort (in the C collation) as the IDs do';

CREATE FUNCTION snowflake_decode(text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_decode(text) IS
'Reads an ID written by snowflake_encode: 13 Crockford base32 characters in either case, with O read as 0 and I and L as 1';
