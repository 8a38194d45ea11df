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

-- every object is the bootstrap superuser's; only the three lease functions
-- run with its privileges (SECURITY DEFINER), so that the fleet's role
-- needs no privilege on the registry table: they live in the schema
-- snowflake, take no search path from the caller, and no one may run them
-- unless the extension's owner grants it
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
   AND NOT (d.classid = 'pg_cast'::regclass)
 GROUP BY 1;
-- (types are left out above, since only some PostgreSQL versions list a
-- table's row type as a member, and casts, which have no owner: the column
-- type is the bootstrap superuser's too)
SELECT pg_get_userbyid(typowner) = :'superuser' AS type_owned_by_bootstrap_superuser
  FROM pg_type WHERE oid = 'snowflake'::regtype;
SELECT p.oid::regprocedure AS security_definer, p.pronamespace::regnamespace AS schema,
       p.proconfig AS settings,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_may_run,
       has_function_privilege('regress_snowflake_owner', p.oid, 'EXECUTE WITH GRANT OPTION') AS owner_may_grant
  FROM pg_depend d
  JOIN pg_extension e ON d.refobjid = e.oid AND e.extname = 'snowflake'
  JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND p.prosecdef
 ORDER BY 1::text;

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
CREATE PUBLICATION regress_registry FOR TABLE snowflake.workers;
ALTER TYPE snowflake OWNER TO regress_snowflake_owner;
DROP CAST (bigint AS snowflake);
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

--
-- A superuser who migrates a table with widen => true runs ALTER TABLE ...
-- TYPE, which checks the table's constraints again and so calls functions
-- of the table's owner: they run as the table's owner, not as the superuser.
--
\c - :superuser
SET TimeZone = 'UTC';
\set SHOW_CONTEXT never
CREATE SCHEMA shop AUTHORIZATION regress_snowflake_owner;
GRANT USAGE, CREATE ON SCHEMA shop TO regress_snowflake_app;
SET ROLE regress_snowflake_app;
CREATE FUNCTION shop.check_id(anyelement) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    RAISE NOTICE 'shop.check_id runs as %', current_user;
    RETURN true;
END
$$;
CREATE TABLE shop.narrow (id serial PRIMARY KEY CHECK (shop.check_id(id)));
INSERT INTO shop.narrow DEFAULT VALUES;
RESET ROLE;
SELECT count(*) AS statements FROM snowflake_migrate('shop.narrow', widen => true);
SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute
 WHERE attrelid = 'shop.narrow'::regclass AND attname = 'id';
DROP TABLE shop.narrow;

--
-- The database owner owns the schema public (PostgreSQL 15 and later), which
-- holds the extension's functions: it may rename it, create another public
-- and put functions of the extension's names there.  Nothing of ours breaks
-- or calls them, whoever runs it and whatever the search_path.  Each planted
-- function says so when it runs, in a NOTICE (which a rollback cannot take
-- back) and in a row of planted_calls.
--
\c - regress_snowflake_owner
SET TimeZone = 'UTC';
\set SHOW_CONTEXT never
CREATE TABLE invoices (id bigserial PRIMARY KEY, note text);
GRANT SELECT, INSERT ON invoices TO regress_snowflake_app;
GRANT USAGE ON SEQUENCE invoices_id_seq TO regress_snowflake_app;
CREATE TABLE events (id bigint PRIMARY KEY);
INSERT INTO events
SELECT snowflake_compose('2025-02-01 00:00+00'::timestamptz + d * interval '1 day', 1, 0)
  FROM generate_series(0, 2) AS d;
ALTER SCHEMA public RENAME TO app_real;
CREATE SCHEMA public;
GRANT USAGE ON SCHEMA public TO PUBLIC;
CREATE TABLE public.planted_calls (function_name text, called_by name, as_superuser boolean);
GRANT INSERT ON public.planted_calls TO PUBLIC;
CREATE FUNCTION public.planted(function_name text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    RAISE NOTICE 'planted function % runs as %', function_name, current_user;
    INSERT INTO public.planted_calls
    SELECT function_name, current_user, rolsuper FROM pg_roles WHERE rolname = current_user;
END
$$;
-- as the review that found it wrote it: the owner makes itself superuser
-- as soon as a superuser runs it
CREATE FUNCTION public.snowflake_worker_identity(OUT worker_id int, OUT system_identifier bigint, OUT host text)
LANGUAGE plpgsql AS $$ BEGIN
  PERFORM public.planted('snowflake_worker_identity');
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    EXECUTE 'ALTER ROLE regress_snowflake_owner SUPERUSER'; END IF;
  SELECT s.worker_id, c.system_identifier, 'x' INTO worker_id, system_identifier, host
    FROM app_real.snowflake_stats() s, pg_control_system() c;
END $$;
CREATE FUNCTION public.snowflake_stats(OUT worker_id int) LANGUAGE sql
    AS $$ SELECT public.planted('snowflake_stats'); SELECT 1 $$;
CREATE FUNCTION public.snowflake_check_worker() RETURNS boolean LANGUAGE sql
    AS $$ SELECT public.planted('snowflake_check_worker'); SELECT true $$;
CREATE FUNCTION public.snowflake_nextval() RETURNS bigint LANGUAGE sql
    AS $$ SELECT public.planted('snowflake_nextval'); SELECT 1::bigint $$;
CREATE FUNCTION public.planted_check(function_name text) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.planted(function_name); RETURN true; END $$;
CREATE DOMAIN public.snowflake AS bigint CHECK (public.planted_check('domain snowflake'));
-- and, as the extension's owner, makes them members of the extension,
-- which it may do with objects it owns.  (VACUUM, as autovacuum would in
-- time, frees the catalog rows of the extension dropped above: the new
-- members' rows are stored before the real ones', so that a lookup of a
-- member by its name would find the planted one first.)
\c - :superuser
VACUUM pg_catalog.pg_depend;
\c - regress_snowflake_owner
ALTER EXTENSION snowflake ADD FUNCTION public.snowflake_nextval();
ALTER EXTENSION snowflake ADD DOMAIN public.snowflake;
SELECT count(*) AS snowflake_nextval_members
  FROM pg_depend d JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND p.proname = 'snowflake_nextval' AND p.pronargs = 0;
CREATE FUNCTION public.snowflake_range_min_id(tstzrange) RETURNS bigint LANGUAGE sql
    AS $$ SELECT public.planted('snowflake_range_min_id'); SELECT 0::bigint $$;
CREATE FUNCTION public.snowflake_range_max_id(tstzrange) RETURNS bigint LANGUAGE sql
    AS $$ SELECT public.planted('snowflake_range_max_id'); SELECT 0::bigint $$;

-- A superuser checks the registry, pinning search_path as a careful
-- monitoring query does: the owner does not become superuser.
\c - :superuser
SET search_path = pg_catalog;
SET TimeZone = 'UTC';
\set SHOW_CONTEXT never
SELECT app_real.snowflake_check_worker();
SELECT worker_id, host FROM app_real.snowflake_register_worker('owner-db');
SELECT worker_id, host IS DISTINCT FROM 'x' AS real_host FROM app_real.snowflake_worker_identity();
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_snowflake_owner';

-- A superuser migrates the owner's table: the default calls the
-- extension's snowflake_nextval(), a catalog dependency, and nothing else.
SELECT kind, step, statement FROM app_real.snowflake_migrate('app_real.invoices')
 ORDER BY kind, step;
SELECT pg_get_expr(d.adbin, d.adrelid) AS "default",
       (SELECT array_agg(p.refobjid::regprocedure) FROM pg_depend p
         WHERE p.classid = 'pg_attrdef'::regclass AND p.objid = d.oid
           AND p.refclassid = 'pg_proc'::regclass) AS calls
  FROM pg_attrdef d WHERE d.adrelid = 'app_real.invoices'::regclass;
-- and the application's inserts get IDs from the generator
\c - regress_snowflake_app
SET TimeZone = 'UTC';
INSERT INTO app_real.invoices (note) VALUES ('first');
SELECT (app_real.snowflake_parse(id)).worker_id FROM app_real.invoices;

-- Moved to the type snowflake, the key is of the extension's type, the
-- one whose input function is the extension's, not of the domain planted
-- as public.snowflake.
\c - :superuser
SET search_path = pg_catalog;
SET TimeZone = 'UTC';
\set SHOW_CONTEXT never
SELECT count(*) AS statements
  FROM app_real.snowflake_migrate('app_real.invoices', to_type => true);
SELECT format_type(a.atttypid, a.atttypmod) AS type, t.typinput, t.typtype,
       pg_get_expr(d.adbin, d.adrelid) AS "default"
  FROM pg_attribute a
  JOIN pg_type t ON t.oid = a.atttypid
  JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE a.attrelid = 'app_real.invoices'::regclass AND a.attname = 'id';

-- The planner's rewrite of <@ calls the extension's range functions,
-- wherever they are now, and the query gives the right rows.
\c - :superuser
SET search_path = pg_catalog;
SET TimeZone = 'UTC';
\set SHOW_CONTEXT never
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM app_real.events
 WHERE id OPERATOR(app_real.<@) tstzrange('2025-02-02 00:00+00'::timestamptz,
                                          '2025-02-02 00:00+00'::timestamptz + interval '1 day');
SELECT app_real.snowflake_to_timestamptz(id) AT TIME ZONE 'UTC' AS created_at FROM app_real.events
 WHERE id OPERATOR(app_real.<@) tstzrange('2025-02-02 00:00+00'::timestamptz,
                                          '2025-02-02 00:00+00'::timestamptz + interval '1 day');
RESET enable_seqscan;

-- None of the planted functions ran.
SELECT * FROM public.planted_calls;

--
-- snowflake_migrate() names tables and functions in its statements, and a
-- schema may be renamed and replaced between two of them.  Here an event
-- trigger does it at the worst moment, as a concurrent session could: it
-- renames the schema and plants another of the name the moment a given
-- command starts.  The migration refuses, with nothing changed and nothing
-- planted run.  (The trigger's function runs as the superuser who owns it,
-- whoever runs the command: snowflake_migrate runs ALTER TABLE ... TYPE as
-- the table's owner.)
--
CREATE TABLE public.swap_at (command_tag text, schema_name name, plant text);
CREATE FUNCTION public.swap_schema() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    swap record;
BEGIN
    DELETE FROM public.swap_at WHERE command_tag = tg_tag RETURNING * INTO swap;
    IF FOUND THEN
        EXECUTE format('ALTER SCHEMA %I RENAME TO %I', swap.schema_name, swap.schema_name || '_moved');
        EXECUTE format('CREATE SCHEMA %I AUTHORIZATION regress_snowflake_owner', swap.schema_name);
        EXECUTE swap.plant;
    END IF;
END
$$;
SET ROLE regress_snowflake_app;
CREATE TABLE shop.items (id bigserial PRIMARY KEY);
INSERT INTO shop.items DEFAULT VALUES;
RESET ROLE;
CREATE EVENT TRIGGER swap_schema ON ddl_command_start EXECUTE FUNCTION public.swap_schema();

-- The table is read through a view bound to it: here its schema is
-- replaced just before, by one whose "items" is a view of planted code.
INSERT INTO public.swap_at VALUES ('CREATE VIEW', 'shop',
    'CREATE VIEW shop.items AS SELECT 1::bigint AS id FROM public.planted(''view shop.items'')');
SELECT * FROM app_real.snowflake_migrate('shop.items');
SELECT pg_get_expr(adbin, adrelid) AS "default" FROM pg_attrdef
 WHERE adrelid = 'shop.items'::regclass;
-- (the error rolled the renaming back too)
DELETE FROM public.swap_at;

-- The default names snowflake_nextval() by its schema's name, checked
-- by OID afterwards: here the extension's schema is replaced just before
-- the first ALTER TABLE, by one with a planted snowflake_nextval().
INSERT INTO public.swap_at VALUES ('ALTER TABLE', 'app_real',
    'CREATE FUNCTION app_real.snowflake_nextval() RETURNS bigint LANGUAGE sql
         AS $$ SELECT public.planted(''app_real.snowflake_nextval''); SELECT 1::bigint $$');
SELECT * FROM app_real.snowflake_migrate('shop.items');
SELECT pg_get_expr(adbin, adrelid) AS "default" FROM pg_attrdef
 WHERE adrelid = 'shop.items'::regclass;
SELECT nspname FROM pg_namespace WHERE nspname LIKE 'app_real%' OR nspname LIKE 'shop%' ORDER BY 1;
DELETE FROM public.swap_at;

-- Moving the key to the type snowflake names the type by its schema's
-- name: here the extension's schema is replaced just before the first
-- ALTER TABLE, which changes the type, by one where snowflake is a domain
-- whose CHECK calls planted code.  The statement refuses before the check
-- could run.
INSERT INTO public.swap_at VALUES ('ALTER TABLE', 'app_real',
    'GRANT USAGE ON SCHEMA app_real TO PUBLIC;
     CREATE DOMAIN app_real.snowflake AS bigint CHECK (public.planted_check(''app_real.snowflake''))');
SELECT * FROM app_real.snowflake_migrate('shop.items', to_type => true);
SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute
 WHERE attrelid = 'shop.items'::regclass AND attname = 'id';
SELECT nspname FROM pg_namespace WHERE nspname LIKE 'app_real%' ORDER BY 1;
DELETE FROM public.swap_at;

-- A superuser's table in the owner's schema: ALTER TABLE ... TYPE
-- (widen => true) runs as the table's owner, the superuser, and names the
-- table by its schema's name.  Here the schema is replaced just before, by
-- one where a table of that name has a CHECK that calls planted code once
-- its column is bigint.  The statement refuses before it checks a row.
CREATE TABLE shop.counters (id serial PRIMARY KEY);
INSERT INTO shop.counters DEFAULT VALUES;
INSERT INTO public.swap_at VALUES ('ALTER TABLE', 'shop',
    'GRANT USAGE ON SCHEMA shop TO PUBLIC;
     CREATE TABLE shop.counters (id integer
         CHECK (pg_typeof(id) = ''integer''::regtype OR public.planted_check(''table shop.counters'')));
     INSERT INTO shop.counters VALUES (1);
     ALTER TABLE shop.counters OWNER TO regress_snowflake_owner');
SELECT * FROM app_real.snowflake_migrate('shop.counters', widen => true);
SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute
 WHERE attrelid = 'shop.counters'::regclass AND attname = 'id';
SELECT nspname FROM pg_namespace WHERE nspname LIKE 'shop%' ORDER BY 1;
DROP EVENT TRIGGER swap_schema;
DROP SCHEMA shop CASCADE;

-- Still, none of the planted functions ran, and the owner is no superuser.
SELECT * FROM public.planted_calls;
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_snowflake_owner';

-- The owner puts its schemas back as they were.
\c - regress_snowflake_owner
ALTER EXTENSION snowflake DROP FUNCTION public.snowflake_nextval();
ALTER EXTENSION snowflake DROP DOMAIN public.snowflake;
DROP SCHEMA public CASCADE;
ALTER SCHEMA app_real RENAME TO public;
DROP TABLE invoices, events;

-- The owner may drop it, and the registry's schema goes with it.
\c - regress_snowflake_owner
DROP TABLE orders;
DROP EXTENSION snowflake;
SELECT to_regnamespace('snowflake') IS NULL AS schema_dropped;

\c :regress_db :superuser
DROP DATABASE regression_snowflake_trusted;
DROP ROLE regress_snowflake_owner;
DROP ROLE regress_snowflake_app;
