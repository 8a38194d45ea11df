--
-- The extension is trusted: a role with CREATE on a database (its owner,
-- say) may create it there without being a superuser.  The scripts then run
-- as the bootstrap superuser, who owns every object they create; the
-- creating role owns only the extension.  What must hold: that role gets no
-- power over the server-wide generator beyond what every role has, cannot
-- change or take over the extension's objects, and can use the registry.
--
SELECT current_user AS superuser, current_database() AS regress_db \gset
SELECT superuser, trusted FROM pg_available_extension_versions
 WHERE name = 'snowflake' AND version = '1.4';

CREATE ROLE regress_snowflake_owner LOGIN;
CREATE ROLE regress_snowflake_app LOGIN;
CREATE DATABASE regression_snowflake_trusted OWNER regress_snowflake_owner;
\c regression_snowflake_trusted regress_snowflake_app
SET TimeZone = 'UTC';
-- the PL/pgSQL functions would add CONTEXT lines naming themselves
\set SHOW_CONTEXT never

-- a role without CREATE on the database may not create it
CREATE EXTENSION snowflake;

\c - regress_snowflake_owner
SET TimeZone = 'UTC';
\set SHOW_CONTEXT never
-- a schema named snowflake is never taken over (its owner could alter it or
-- add to it): one that holds anything is refused; an empty one, as Rails'
-- schema.rb creates before it enables extensions, is dropped and made anew
CREATE SCHEMA snowflake;
CREATE TABLE snowflake.mine (x int);
CREATE EXTENSION snowflake;
DROP TABLE snowflake.mine;
CREATE EXTENSION snowflake SCHEMA snowflake;
CREATE EXTENSION snowflake;
SELECT pg_get_userbyid(nspowner) = :'superuser' AS owned_by_bootstrap_superuser,
       has_schema_privilege('regress_snowflake_owner', oid, 'CREATE') AS owner_may_create,
       has_schema_privilege('regress_snowflake_app', oid, 'USAGE') AS others_may_use
  FROM pg_namespace WHERE nspname = 'snowflake';
DROP EXTENSION snowflake;

-- the owner creates it, and updates it: here from 1.0, through every script
CREATE EXTENSION snowflake VERSION '1.0';
ALTER EXTENSION snowflake UPDATE;
SELECT extversion, pg_get_userbyid(extowner) AS extension_owner
  FROM pg_extension WHERE extname = 'snowflake';

-- every object is the bootstrap superuser's, and none runs with its owner's
-- privileges (SECURITY DEFINER)
SELECT (SELECT rolname FROM pg_roles WHERE oid = 10) = :'superuser' AS bootstrap_is_superuser;
SELECT pg_get_userbyid(coalesce(p.proowner, c.relowner, n.nspowner, o.oprowner)) = :'superuser'
         AS owned_by_bootstrap_superuser,
       count(*) AS objects,
       count(*) FILTER (WHERE p.prosecdef) AS security_definer
  FROM pg_depend d
  JOIN pg_extension e ON d.refobjid = e.oid AND e.extname = 'snowflake'
  LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
  LEFT JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
  LEFT JOIN pg_namespace n ON d.classid = 'pg_namespace'::regclass AND n.oid = d.objid
  LEFT JOIN pg_operator o ON d.classid = 'pg_operator'::regclass AND o.oid = d.objid
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND NOT (d.classid = 'pg_type'::regclass)
 GROUP BY 1;

-- so the owner can use it like everyone else,
SELECT snowflake_nextval() > 0 AS generates;
SELECT worker_id FROM snowflake_stats;
-- but cannot reset the server-wide counters, nor let anyone else,
SELECT snowflake_stats_reset();
GRANT EXECUTE ON FUNCTION snowflake_stats_reset() TO regress_snowflake_app;
-- nor replace, alter or drop what the extension created
CREATE OR REPLACE FUNCTION snowflake_nextval() RETURNS bigint LANGUAGE sql AS 'SELECT 1::bigint';
ALTER FUNCTION snowflake_stats_reset() OWNER TO regress_snowflake_owner;
ALTER TABLE snowflake.workers DISABLE TRIGGER workers_guard;
DROP TABLE snowflake.workers;
CREATE TABLE snowflake.mine (x int);
-- the planner support function takes "internal", which no SQL value is
SELECT snowflake_in_range_support(NULL::internal);

-- The owner runs the registry of its database: registers, and retires rows
-- (the guard still refuses a worker id held by another system).
SELECT worker_id, host FROM snowflake_register_worker('owner-db');
\set VERBOSITY terse
INSERT INTO snowflake.workers (worker_id, system_identifier, host)
VALUES (1, 7000000000000000009, 'other');
\set VERBOSITY default
INSERT INTO snowflake.workers (worker_id, system_identifier, host)
VALUES (2, 7000000000000000002, 'db-two');
UPDATE snowflake.workers SET host = 'db-2' WHERE worker_id = 2;
DELETE FROM snowflake.workers WHERE worker_id = 2;
SELECT snowflake_check_worker();

-- snowflake_migrate runs with the caller's privileges: the owner migrates
-- its own table
CREATE TABLE orders (id bigserial PRIMARY KEY, note text);
SELECT count(*) > 0 AS migrated FROM snowflake_migrate('orders');

-- Another role: may read, generate and check, nothing more.
\c - regress_snowflake_app
SET TimeZone = 'UTC';
\set SHOW_CONTEXT never
SELECT snowflake_nextval() > 0 AS generates;
SELECT count(*) AS registry_rows FROM snowflake.workers;
SELECT snowflake_check_worker();
SELECT snowflake_stats_reset();
SELECT snowflake_register_worker('app');
DELETE FROM snowflake.workers;
SELECT * FROM snowflake_migrate('orders', dry_run => true);

-- A superuser may let a monitoring role reset the counters.
\c - :superuser
GRANT EXECUTE ON FUNCTION snowflake_stats_reset() TO regress_snowflake_app;
\c - regress_snowflake_app
SELECT snowflake_stats_reset();

-- The owner may drop it, and the registry's schema goes with it.
\c - regress_snowflake_owner
DROP TABLE orders;
DROP EXTENSION snowflake;
SELECT to_regnamespace('snowflake') IS NULL AS schema_dropped;

\c :regress_db :superuser
DROP DATABASE regression_snowflake_trusted;
DROP ROLE regress_snowflake_owner;
DROP ROLE regress_snowflake_app;
