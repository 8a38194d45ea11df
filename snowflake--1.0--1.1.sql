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

-- Worker-id registry (issue 7)
--
-- Two servers with the same worker id mint the same IDs.  The registry
-- records which database system (pg_control_system().system_identifier)
-- holds each worker id.  The guard trigger refuses a second system for a
-- worker id on every insert: a local registration, a manual INSERT, and rows
-- applied by logical replication (it is ENABLE ALWAYS), so when two servers
-- register the same worker id on different nodes at the same time, the
-- conflict stops the subscription with the guard's error.  A row that is
-- already there is skipped silently, which keeps a mesh of publications
-- from looping.  docs/operations.md describes the topologies.

CREATE TABLE @extschema@.snowflake_workers (
    worker_id integer PRIMARY KEY CHECK (worker_id >= 0),
    system_identifier bigint NOT NULL,
    host text,
    first_seen timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT snowflake_workers_worker_system_key UNIQUE (worker_id, system_identifier)
);

-- Logical replication identifies rows by worker id AND system, so that
-- deleting one server's row never deletes another server's row elsewhere.
ALTER TABLE @extschema@.snowflake_workers
    REPLICA IDENTITY USING INDEX snowflake_workers_worker_system_key;

COMMENT ON TABLE @extschema@.snowflake_workers IS
'Which database system holds each worker id; replicate it across the fleet so that a worker id registered twice is refused';
COMMENT ON COLUMN @extschema@.snowflake_workers.worker_id IS
'The snowflake.worker_id of the registered server';
COMMENT ON COLUMN @extschema@.snowflake_workers.system_identifier IS
'pg_control_system().system_identifier of the registered server: shared by its physical standbys, new after initdb or pg_upgrade';
COMMENT ON COLUMN @extschema@.snowflake_workers.host IS
'A label for the registered server, for people reading errors';
COMMENT ON COLUMN @extschema@.snowflake_workers.first_seen IS
'When the worker id was registered';

-- pg_dump keeps the rows (the table itself comes with CREATE EXTENSION).
SELECT pg_catalog.pg_extension_config_dump('@extschema@.snowflake_workers', '');

GRANT SELECT ON @extschema@.snowflake_workers TO PUBLIC;

CREATE FUNCTION @extschema@.snowflake_workers_guard()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    held @extschema@.snowflake_workers;
BEGIN
    SELECT * INTO held
      FROM @extschema@.snowflake_workers w
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

COMMENT ON FUNCTION @extschema@.snowflake_workers_guard() IS
'Trigger on snowflake_workers: skips a row that is already registered and refuses a worker id that another database system holds, also when the row arrives by logical replication';

CREATE TRIGGER snowflake_workers_guard
    BEFORE INSERT ON @extschema@.snowflake_workers
    FOR EACH ROW EXECUTE FUNCTION @extschema@.snowflake_workers_guard();

-- fire in logical replication apply workers too
ALTER TABLE @extschema@.snowflake_workers
    ENABLE ALWAYS TRIGGER snowflake_workers_guard;

CREATE FUNCTION @extschema@.snowflake_worker_identity(
    OUT worker_id integer,
    OUT system_identifier bigint,
    OUT host text)
RETURNS record
LANGUAGE sql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT s.worker_id,
           c.system_identifier,
           coalesce(host(inet_server_addr()),
                    nullif(current_setting('cluster_name'), ''))
      FROM @extschema@.snowflake_stats() s,
           pg_control_system() c
$$;

COMMENT ON FUNCTION @extschema@.snowflake_worker_identity() IS
'Returns the row that registers this server: its worker id (NULL while unset), its database system identifier, and the address it was reached at or its cluster_name';

CREATE FUNCTION @extschema@.snowflake_check_worker()
RETURNS boolean
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    me record;
    held @extschema@.snowflake_workers;
BEGIN
    SELECT * INTO me FROM @extschema@.snowflake_worker_identity();
    IF me.worker_id IS NULL THEN
        RAISE EXCEPTION 'snowflake.worker_id is not set'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Set snowflake.worker_id in postgresql.conf to a number that no other server uses, and restart the server.';
    END IF;
    SELECT * INTO held
      FROM @extschema@.snowflake_workers w
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

COMMENT ON FUNCTION @extschema@.snowflake_check_worker() IS
'Returns true if the registry gives this server''s worker id to this server, false if the worker id is not registered; raises an error if another database system holds it';

CREATE FUNCTION @extschema@.snowflake_register_worker(host text DEFAULT NULL)
RETURNS @extschema@.snowflake_workers
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    me record;
    registered @extschema@.snowflake_workers;
BEGIN
    SELECT * INTO me FROM @extschema@.snowflake_worker_identity();
    IF me.worker_id IS NULL THEN
        RAISE EXCEPTION 'snowflake.worker_id is not set'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Set snowflake.worker_id in postgresql.conf to a number that no other server uses, and restart the server.';
    END IF;
    -- the guard trigger refuses a worker id held by another system
    INSERT INTO @extschema@.snowflake_workers (worker_id, system_identifier, host)
    VALUES (me.worker_id, me.system_identifier,
            coalesce(snowflake_register_worker.host, me.host))
    ON CONFLICT (worker_id) DO NOTHING;
    -- a concurrent registration may have won the race
    PERFORM @extschema@.snowflake_check_worker();
    SELECT * INTO registered
      FROM @extschema@.snowflake_workers w
     WHERE w.worker_id = me.worker_id;
    RETURN registered;
END
$$;

COMMENT ON FUNCTION @extschema@.snowflake_register_worker(text) IS
'Registers this server''s worker id in snowflake_workers and returns the row; a no-op if this server registered it before, an error if another database system holds it';
