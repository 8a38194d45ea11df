/* snowflake--1.2--1.3.sql */

\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.3'" to load this file. \quit

-- Comments: one line each, short enough for \df+ and \d+.

COMMENT ON FUNCTION snowflake_nextval() IS
'Next ID from this server''s generator: unique, and strictly increasing on the server';

COMMENT ON FUNCTION snowflake_currval() IS
'The ID snowflake_nextval() last returned in this session';

COMMENT ON FUNCTION snowflake_nextval(integer) IS
'n new IDs in increasing order, reserved in one step, for bulk loads';

COMMENT ON FUNCTION snowflake_parse(bigint) IS
'Splits an ID into its creation time, worker id and sequence number';

COMMENT ON FUNCTION snowflake_to_timestamptz(bigint) IS
'The instant, to the millisecond, an ID was created';

COMMENT ON FUNCTION snowflake_min_id(timestamptz) IS
'Smallest ID any worker could issue in the millisecond of the instant';

COMMENT ON FUNCTION snowflake_max_id(timestamptz) IS
'Largest ID any worker could issue in the millisecond of the instant';

COMMENT ON FUNCTION snowflake_compose(timestamptz, integer, integer) IS
'The ID made of this creation time, worker id and sequence number';

COMMENT ON FUNCTION snowflake_range_min_id(tstzrange) IS
'Smallest ID created within the range, clamped to the layout''s lifetime (0 if none)';

COMMENT ON FUNCTION snowflake_range_max_id(tstzrange) IS
'Largest ID created within the range, clamped to the layout''s lifetime (-1 if none)';

COMMENT ON FUNCTION snowflake_in_range_support(internal) IS
'Planner support for bigint <@ tstzrange: rewrites it into ID comparisons';

COMMENT ON FUNCTION snowflake_in_range(bigint, tstzrange) IS
'Whether an ID was created within the time range';

COMMENT ON FUNCTION snowflake_encode(bigint) IS
'An ID as 13 Crockford base32 characters, which sort as the IDs do';

COMMENT ON FUNCTION snowflake_decode(text) IS
'Reads the 13-character base32 form written by snowflake_encode';

COMMENT ON FUNCTION snowflake_stats() IS
'The generator''s settings, state and counters';

COMMENT ON FUNCTION snowflake_stats_reset() IS
'Zeroes the counters of snowflake_stats; superusers and roles granted EXECUTE';

COMMENT ON FUNCTION snowflake_migrate(regclass, name, boolean, boolean) IS
'Moves a serial or identity column onto snowflake_nextval(); returns what it ran and the undo';

COMMENT ON TABLE @extschema@.snowflake_workers IS
'Which database system holds each worker id: replicate it to catch a worker id used twice';

COMMENT ON COLUMN @extschema@.snowflake_workers.system_identifier IS
'The registered server''s pg_control_system().system_identifier';

COMMENT ON FUNCTION @extschema@.snowflake_workers_guard() IS
'Trigger: refuses to give a worker id to a second database system, also in replication';

COMMENT ON FUNCTION @extschema@.snowflake_worker_identity() IS
'This server''s registry row: worker id, system identifier and host';

COMMENT ON FUNCTION @extschema@.snowflake_check_worker() IS
'True if the registry gives this worker id to this server; an error if another holds it';

COMMENT ON FUNCTION @extschema@.snowflake_register_worker(text) IS
'Registers this server''s worker id in snowflake_workers; an error if another holds it';
