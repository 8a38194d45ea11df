--
-- The worker-id registry: snowflake.workers, its guard trigger,
-- snowflake_worker_identity(), snowflake_register_worker() and
-- snowflake_check_worker().  Another database system is simulated by
-- inserting its row directly.  (Unset worker id, no preload, and two real
-- servers replicating the registry: t/302_worker_collision.pl.)
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';

-- This system's identifier varies from run to run: keep it in a variable,
-- and show errors with it replaced by "THIS SYSTEM".
SELECT system_identifier AS sysid FROM pg_control_system() \gset
CREATE FUNCTION pg_temp.error_of(statement text,
                                 OUT code text, OUT message text,
                                 OUT detail text, OUT hint text)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE statement;
    message := 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS code = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
                            detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
    detail := replace(detail,
                      (SELECT system_identifier::text FROM pg_control_system()),
                      'THIS SYSTEM');
END
$$;

-- The table and its trigger function live in the schema snowflake, which
-- the extension created and everyone may use; nothing of the extension is a
-- table in the schema the functions went to (the application's schema).
SELECT n.nspname AS schema, pg_get_userbyid(n.nspowner) = current_user AS owned_by_me,
       has_schema_privilege('public', n.oid, 'USAGE') AS public_usage,
       has_schema_privilege('public', n.oid, 'CREATE') AS public_create,
       (SELECT deptype FROM pg_depend
         WHERE classid = 'pg_namespace'::regclass AND objid = n.oid
           AND refclassid = 'pg_extension'::regclass) AS member
  FROM pg_namespace n WHERE n.nspname = 'snowflake';
SELECT pg_describe_object(classid, objid, 0) AS in_schema_snowflake
  FROM pg_depend d
 WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
   AND 'snowflake'::regnamespace IN
       ((SELECT relnamespace FROM pg_class WHERE d.classid = 'pg_class'::regclass AND oid = d.objid),
        (SELECT pronamespace FROM pg_proc WHERE d.classid = 'pg_proc'::regclass AND oid = d.objid),
        -- types of their own: not the row types of its tables (nor their
        -- arrays), which only some PostgreSQL versions list as members
        (SELECT t.typnamespace FROM pg_type t
          WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid AND t.typrelid = 0
            AND NOT EXISTS (SELECT FROM pg_type el WHERE el.oid = t.typelem AND el.typrelid <> 0)))
 ORDER BY 1;
SELECT count(*) AS extension_tables_in_public
  FROM pg_depend d JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND c.relkind IN ('r', 'p') AND c.relnamespace = 'public'::regnamespace;

-- the table: kept by pg_dump, replicated by (worker id, system), guarded
-- also in replication apply workers ('A' = ENABLE ALWAYS)
SELECT extconfig::regclass[] AS dumped_tables FROM pg_extension WHERE extname = 'snowflake';
SELECT relreplident,
       (SELECT indexrelid::regclass FROM pg_index
         WHERE indrelid = 'snowflake.workers'::regclass AND indisreplident) AS replica_identity
  FROM pg_class WHERE oid = 'snowflake.workers'::regclass;
SELECT tgname, tgenabled, pg_get_triggerdef(oid) AS definition FROM pg_trigger
 WHERE tgrelid = 'snowflake.workers'::regclass AND NOT tgisinternal;
SELECT count(*) AS registered FROM snowflake.workers;

-- who am I
SELECT worker_id,
       system_identifier = :'sysid' AS is_this_system,
       host IS NOT DISTINCT FROM coalesce(host(inet_server_addr()),
                                          nullif(current_setting('cluster_name'), ''))
         AS default_host
  FROM snowflake_worker_identity();

-- not registered yet
SELECT snowflake_check_worker();

-- register; again is a no-op that keeps the first row
SELECT worker_id, system_identifier = :'sysid' AS is_this_system, host,
       first_seen = now() AS first_seen_now
  FROM snowflake_register_worker('db-one');
SELECT first_seen AS first_seen_one FROM snowflake.workers WHERE worker_id = 1 \gset
SELECT snowflake_check_worker();
SELECT worker_id, host, first_seen = :'first_seen_one' AS same_first_seen
  FROM snowflake_register_worker('renamed');
SELECT worker_id, host, first_seen = :'first_seen_one' AS same_first_seen
  FROM snowflake_register_worker();
-- a plain INSERT of the same row is skipped as well
INSERT INTO snowflake.workers (worker_id, system_identifier, host)
VALUES (1, :'sysid', 'copy');
SELECT worker_id, host FROM snowflake.workers ORDER BY worker_id;

-- other systems may hold other worker ids
INSERT INTO snowflake.workers (worker_id, system_identifier, host, first_seen)
VALUES (2, 7000000000000000002, 'db-two', '2025-06-01 12:00:00+00');
SELECT worker_id, host FROM snowflake.workers ORDER BY worker_id;

-- but a worker id belongs to one system: refused on insert, whoever inserts
-- (the message as psql shows it, then each field)
\set SHOW_CONTEXT never
INSERT INTO snowflake.workers (worker_id, system_identifier, host)
VALUES (2, 7000000000000000003, 'db-three');
\set SHOW_CONTEXT errors
UPDATE snowflake.workers SET first_seen = '2025-05-01 00:00:00+00' WHERE worker_id = 1;
\x on
SELECT * FROM pg_temp.error_of($$
    INSERT INTO snowflake.workers (worker_id, system_identifier, host)
    VALUES (2, 7000000000000000003, 'db-three')$$);
SELECT * FROM pg_temp.error_of($$
    INSERT INTO snowflake.workers (worker_id, system_identifier)
    VALUES (2, 7000000000000000003)$$);
SELECT * FROM pg_temp.error_of($$
    INSERT INTO snowflake.workers (worker_id, system_identifier, host)
    VALUES (1, 7000000000000000003, 'db-three')$$);
-- also as a logical replication apply worker would insert it
SET session_replication_role = replica;
SELECT message FROM pg_temp.error_of($$
    INSERT INTO snowflake.workers (worker_id, system_identifier, host)
    VALUES (2, 7000000000000000003, 'db-three')$$);
RESET session_replication_role;
SELECT code, message FROM pg_temp.error_of($$
    INSERT INTO snowflake.workers (worker_id, system_identifier) VALUES (-1, 1)$$);

-- nor by UPDATE: changing the system that holds a worker id, or moving a
-- row onto a worker id that another system holds; also as a logical
-- replication apply worker would apply it
SELECT * FROM pg_temp.error_of($$
    UPDATE snowflake.workers SET system_identifier = 7000000000000000003, host = 'db-three'
     WHERE worker_id = 2$$);
SELECT * FROM pg_temp.error_of($$
    UPDATE snowflake.workers SET worker_id = 2 WHERE worker_id = 1$$);
SELECT * FROM pg_temp.error_of($$
    UPDATE snowflake.workers SET worker_id = 1, system_identifier = 7000000000000000002
     WHERE worker_id = 2$$);
SET session_replication_role = replica;
SELECT message FROM pg_temp.error_of($$
    UPDATE snowflake.workers SET system_identifier = 7000000000000000003 WHERE worker_id = 2$$);
RESET session_replication_role;
\x off
SELECT worker_id, system_identifier = :'sysid' AS is_this_system, host
  FROM snowflake.workers ORDER BY worker_id;
-- updates that give no worker id to another system pass: other columns,
-- the same system, a worker id nobody holds
UPDATE snowflake.workers SET host = 'db-2', system_identifier = system_identifier
 WHERE worker_id = 2;
UPDATE snowflake.workers SET worker_id = 3 WHERE worker_id = 2;
SET session_replication_role = replica;
UPDATE snowflake.workers SET worker_id = 2, host = 'db-two' WHERE worker_id = 3;
RESET session_replication_role;
SELECT worker_id, system_identifier, host FROM snowflake.workers
 WHERE worker_id <> 1 ORDER BY worker_id;
\x on

-- another system took this server's worker id (its row arrived first):
-- the check and a new registration both refuse
DELETE FROM snowflake.workers WHERE worker_id = 1;
INSERT INTO snowflake.workers (worker_id, system_identifier, host, first_seen)
VALUES (1, 7000000000000000004, 'impostor', '2025-07-01 08:30:00+00');
SELECT * FROM pg_temp.error_of('SELECT snowflake_check_worker()');
SELECT * FROM pg_temp.error_of($$SELECT snowflake_register_worker('db-one')$$);
-- and so does taking its row over by UPDATE
SELECT * FROM pg_temp.error_of(
    format('UPDATE snowflake.workers SET system_identifier = %s WHERE worker_id = 1', :'sysid'));
\x off
SELECT worker_id, system_identifier, host FROM snowflake.workers ORDER BY worker_id;

-- retiring the other system's row lets this server register
DELETE FROM snowflake.workers WHERE worker_id = 1 AND system_identifier = 7000000000000000004;
SELECT worker_id, host FROM snowflake_register_worker(NULL::text);
SELECT snowflake_check_worker();

-- after pg_upgrade (or a restored dump) this server is a new database
-- system, and its own old row refuses it; the way back is the same, in one
-- transaction so that no other server can take the worker id in between
DELETE FROM snowflake.workers WHERE worker_id = 1;
INSERT INTO snowflake.workers (worker_id, system_identifier, host, first_seen)
VALUES (1, 7000000000000000001, 'db-one', '2025-01-01 00:00:00+00');
SELECT message FROM pg_temp.error_of('SELECT snowflake_check_worker()');
BEGIN;
DELETE FROM snowflake.workers WHERE worker_id = 1 AND system_identifier = 7000000000000000001;
SELECT worker_id, system_identifier = :'sysid' AS is_this_system, host
  FROM snowflake_register_worker('db-one');
COMMIT;
SELECT snowflake_check_worker();

-- everyone may read the registry and check; registering takes INSERT on it
CREATE ROLE regress_snowflake_monitor;
SET ROLE regress_snowflake_monitor;
SELECT count(*) AS readable FROM snowflake.workers;
SELECT snowflake_check_worker();
SELECT message FROM pg_temp.error_of($$SELECT snowflake_register_worker('x')$$);
RESET ROLE;
DROP ROLE regress_snowflake_monitor;

DELETE FROM snowflake.workers;
RESET DateStyle;
RESET TimeZone;
