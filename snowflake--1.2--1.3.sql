/* snowflake--1.2--1.3.sql */

\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.3'" to load this file. \quit

-- The worker-id registry moves out of the application's schema into a
-- schema of its own, so that tools which read the application's schema
-- (Rails' schema dumper, Alembic, Prisma) never see it; the table becomes
-- snowflake.workers.  Moving and renaming keep the table's OID, and with it
-- its rows, its privileges, its registration with pg_extension_config_dump,
-- its replica identity, its trigger (still ENABLE ALWAYS) and its place in
-- publications.  The functions that name it in their bodies follow.

DO $$
BEGIN
    IF pg_catalog.to_regnamespace('snowflake') IS NOT NULL THEN
        RAISE EXCEPTION 'schema "snowflake" already exists'
            USING ERRCODE = 'duplicate_schema',
                  DETAIL = 'The extension keeps its worker-id registry in a schema of its own named snowflake, and does not take over a schema it did not create.',
                  HINT = 'Rename the existing schema (ALTER SCHEMA snowflake RENAME TO ...), then create or update the extension; its functions may go in any other schema.';
    END IF;
END
$$;

CREATE SCHEMA snowflake;

COMMENT ON SCHEMA snowflake IS
'The worker-id registry of the snowflake extension, kept out of the application''s schema';

GRANT USAGE ON SCHEMA snowflake TO PUBLIC;

ALTER TABLE @extschema@.snowflake_workers SET SCHEMA snowflake;
ALTER TABLE snowflake.snowflake_workers RENAME TO workers;
ALTER TABLE snowflake.workers
    RENAME CONSTRAINT snowflake_workers_pkey TO workers_pkey;
ALTER TABLE snowflake.workers
    RENAME CONSTRAINT snowflake_workers_worker_id_check TO workers_worker_id_check;
ALTER TABLE snowflake.workers
    RENAME CONSTRAINT snowflake_workers_worker_system_key TO workers_worker_system_key;
ALTER TRIGGER snowflake_workers_guard ON snowflake.workers RENAME TO workers_guard;

ALTER FUNCTION @extschema@.snowflake_workers_guard() SET SCHEMA snowflake;
ALTER FUNCTION snowflake.snowflake_workers_guard() RENAME TO workers_guard;

-- The role that created the extension registers servers and retires their
-- rows (see snowflake--1.3.sql).
GRANT INSERT, UPDATE, DELETE ON snowflake.workers TO @extowner@;

CREATE OR REPLACE FUNCTION snowflake.workers_guard()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    held snowflake.workers;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF NEW.worker_id = OLD.worker_id
           AND NEW.system_identifier = OLD.system_identifier THEN
            RETURN NEW;
        END IF;
        IF NEW.worker_id = OLD.worker_id THEN
            -- the row being changed is the one that holds the worker id
            held := OLD;
        ELSE
            SELECT * INTO held
              FROM snowflake.workers w
             WHERE w.worker_id = NEW.worker_id;
            -- a free worker id may be taken, as by an insert; one that
            -- this system holds in another row is left to the primary key
            IF NOT FOUND OR held.system_identifier = NEW.system_identifier THEN
                RETURN NEW;
            END IF;
        END IF;
        RAISE EXCEPTION 'snowflake worker id % is already registered by another server',
                        NEW.worker_id
            USING ERRCODE = 'unique_violation',
                  DETAIL = format('Worker id %s belongs to database system %s (%s) since %s; an update tried to give it to database system %s (%s).',
                                  held.worker_id, held.system_identifier,
                                  coalesce('host "' || held.host || '"', 'no host recorded'),
                                  held.first_seen,
                                  NEW.system_identifier,
                                  coalesce('host "' || NEW.host || '"', 'no host recorded')),
                  HINT = 'Two servers with the same worker id generate the same IDs, so a worker id does not move to another database system by UPDATE.  If the registered server is gone for good, or became a new database system (pg_upgrade, a restored dump), delete its row and register the new system.',
                  SCHEMA = TG_TABLE_SCHEMA,
                  TABLE = TG_TABLE_NAME;
    END IF;

    SELECT * INTO held
      FROM snowflake.workers w
     WHERE w.worker_id = NEW.worker_id;
    IF NOT FOUND THEN
        RETURN NEW;
    END IF;
    IF held.system_identifier = NEW.system_identifier THEN
        -- already registered by this system: keep the first row
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'snowflake worker id % is already registered by another server',
                    NEW.worker_id
        USING ERRCODE = 'unique_violation',
              DETAIL = format('Worker id %s belongs to database system %s (%s) since %s; database system %s (%s) tried to register it too.',
                              held.worker_id, held.system_identifier,
                              coalesce('host "' || held.host || '"', 'no host recorded'),
                              held.first_seen,
                              NEW.system_identifier,
                              coalesce('host "' || NEW.host || '"', 'no host recorded')),
              HINT = 'Two servers with the same worker id generate the same IDs.  Give one of them another snowflake.worker_id and restart it; if the registered server is gone for good, delete its row first.',
              SCHEMA = TG_TABLE_SCHEMA,
              TABLE = TG_TABLE_NAME;
END
$$;

CREATE OR REPLACE FUNCTION @extschema@.snowflake_check_worker()
RETURNS boolean
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    me record;
    held snowflake.workers;
BEGIN
    SELECT * INTO me FROM @extschema@.snowflake_worker_identity();
    IF me.worker_id IS NULL THEN
        RAISE EXCEPTION 'snowflake.worker_id is not set'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Set snowflake.worker_id in postgresql.conf to a number that no other server uses, and restart the server.';
    END IF;
    SELECT * INTO held
      FROM snowflake.workers w
     WHERE w.worker_id = me.worker_id;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF held.system_identifier <> me.system_identifier THEN
        RAISE EXCEPTION 'snowflake worker id % is registered to another server',
                        me.worker_id
            USING ERRCODE = 'unique_violation',
                  DETAIL = format('The registry gives worker id %s to database system %s (%s) since %s; this server is database system %s.',
                                  held.worker_id, held.system_identifier,
                                  coalesce('host "' || held.host || '"', 'no host recorded'),
                                  held.first_seen, me.system_identifier),
                  HINT = 'Two servers with the same worker id generate the same IDs.  Stop generating IDs here, give this server another snowflake.worker_id and restart it.';
    END IF;
    RETURN true;
END
$$;

CREATE OR REPLACE FUNCTION @extschema@.snowflake_register_worker(host text DEFAULT NULL)
RETURNS snowflake.workers
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    me record;
    registered snowflake.workers;
BEGIN
    SELECT * INTO me FROM @extschema@.snowflake_worker_identity();
    IF me.worker_id IS NULL THEN
        RAISE EXCEPTION 'snowflake.worker_id is not set'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Set snowflake.worker_id in postgresql.conf to a number that no other server uses, and restart the server.';
    END IF;
    -- the guard trigger refuses a worker id held by another system
    INSERT INTO snowflake.workers (worker_id, system_identifier, host)
    VALUES (me.worker_id, me.system_identifier,
            coalesce(snowflake_register_worker.host, me.host))
    ON CONFLICT (worker_id) DO NOTHING;
    -- a concurrent registration may have won the race
    PERFORM @extschema@.snowflake_check_worker();
    SELECT * INTO registered
      FROM snowflake.workers w
     WHERE w.worker_id = me.worker_id;
    RETURN registered;
END
$$;

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

-- The columns of the view.

COMMENT ON COLUMN snowflake_stats.worker_id IS
'The snowflake.worker_id in force; NULL while it is unset';

COMMENT ON COLUMN snowflake_stats.epoch IS
'The snowflake.epoch in force: the instant timestamp 0 stands for';

COMMENT ON COLUMN snowflake_stats.timestamp_bits IS
'Width of the timestamp field, in bits: milliseconds since the epoch';

COMMENT ON COLUMN snowflake_stats.worker_bits IS
'Width of the worker id field, in bits: 2^worker_bits servers';

COMMENT ON COLUMN snowflake_stats.sequence_bits IS
'Width of the sequence field, in bits: 2^sequence_bits IDs per millisecond';

COMMENT ON COLUMN snowflake_stats.lifetime_end IS
'The last millisecond an ID can carry under this layout and epoch';

COMMENT ON COLUMN snowflake_stats.ids_issued IS
'IDs issued since the counters were reset (or the server started)';

COMMENT ON COLUMN snowflake_stats.last_id IS
'The last ID issued; after a restart, the persisted mark until the first new ID';

COMMENT ON COLUMN snowflake_stats.drift_ms IS
'How far the last ID''s timestamp is ahead of the wall clock now, in ms (0 if not ahead)';

COMMENT ON COLUMN snowflake_stats.largest_drift_ms IS
'The furthest ahead of the wall clock an ID ran when issued since the reset, in ms';

COMMENT ON COLUMN snowflake_stats.mark_id IS
'The persisted mark, as an ID: no ID above it is issued before a new mark is durable';

COMMENT ON COLUMN snowflake_stats.mark_time IS
'The instant the persisted mark stands for (NULL if beyond timestamptz)';

COMMENT ON COLUMN snowflake_stats.marks_written IS
'Marks written since the reset, each a WAL flush and a file fsync';

COMMENT ON COLUMN snowflake_stats.clock_rollbacks IS
'Steps back of the wall clock seen since the reset';

COMMENT ON COLUMN snowflake_stats.largest_rollback_ms IS
'The largest step back of the wall clock seen since the reset, in ms';

COMMENT ON COLUMN snowflake_stats.borrows IS
'IDs that took the next millisecond because the current one was used up';

COMMENT ON COLUMN snowflake_stats.waits IS
'Calls that waited for the clock to catch up, since the reset';

COMMENT ON COLUMN snowflake_stats.wait_time_ms IS
'Total time calls waited for the clock since the reset, in ms';

COMMENT ON COLUMN snowflake_stats.refusals IS
'Calls that failed under the clock rules since the reset';

COMMENT ON COLUMN snowflake_stats.stats_reset IS
'When the counters were last reset, or the server started';

COMMENT ON FUNCTION snowflake_stats_reset() IS
'Zeroes the counters of snowflake_stats; superusers and roles granted EXECUTE';

COMMENT ON FUNCTION snowflake_migrate(regclass, name, boolean, boolean) IS
'Moves a serial or identity column onto snowflake_nextval(); returns what it ran and the undo';

COMMENT ON TABLE snowflake.workers IS
'Which database system holds each worker id: replicate it to catch a worker id used twice';

COMMENT ON COLUMN snowflake.workers.system_identifier IS
'The registered server''s pg_control_system().system_identifier';

COMMENT ON FUNCTION snowflake.workers_guard() IS
'Trigger: refuses to give a worker id to a second database system, also in replication';

COMMENT ON FUNCTION @extschema@.snowflake_worker_identity() IS
'This server''s registry row: worker id, system identifier and host';

COMMENT ON FUNCTION @extschema@.snowflake_check_worker() IS
'True if the registry gives this worker id to this server; an error if another holds it';

COMMENT ON FUNCTION @extschema@.snowflake_register_worker(text) IS
'Registers this server''s worker id in snowflake.workers; an error if another holds it';
