/* snowflake--1.4.sql */

-- The whole SQL surface of snowflake 1.4, installed by CREATE EXTENSION
-- snowflake.  This is the file to read: the scripts beside it for 1.0 and
-- 1.3 and the upgrade scripts (snowflake--A--B.sql) are frozen history,
-- and the regression test sql/upgrade.sql proves that installing 1.0 and
-- updating to 1.4 gives exactly the objects this file creates.
--
-- A change to the surface goes into a new version: a copy of this file
-- named after it, edited, and an upgrade script from this version.

\echo Use "CREATE EXTENSION snowflake" to load this file. \quit

--
-- How the objects find each other
--
-- The extension is trusted, so the role that creates it may be a database
-- owner, who on PostgreSQL 15 and later owns the schema public: it may
-- rename that schema, create another of the same name and put objects of
-- any name in it, at any moment, also while a superuser runs our
-- functions.  So no object here finds another object, of the extension or
-- not, by a name that a less trusted role can redirect when it runs:
--
-- - Bound when created, by OID, with a dependency: the operator's function
--   and its SUPPORT function, the view's query, the trigger's function,
--   the CHECK constraint and the default now() of snowflake.workers, and
--   the bodies of the SQL-standard functions (BEGIN ATOMIC):
--   snowflake_worker_identity(), snowflake_check_worker(),
--   snowflake_register_worker() and snowflake_migrate().  Renaming a
--   schema changes how they print, not what they call.
-- - Looked up when they run, only in pg_catalog and in the schema
--   snowflake, which belongs to the bootstrap superuser and where no one
--   else may create anything: the PL/pgSQL functions (the trigger function
--   and the helpers snowflake.*) run with search_path = pg_catalog,
--   pg_temp and qualify every other name with snowflake.  The SQL-standard
--   functions carry the same setting, though nothing in them is looked up
--   when they run; the C functions take none and look up nothing by name
--   (the planner support function finds snowflake_range_min_id/max_id by
--   the OID of its operator function's schema, as members of this
--   extension).
-- - pg_temp, last in those search paths, is never searched for functions
--   or operators; a relation or type there shadows nothing of pg_catalog
--   (searched first), and only the session that made it sees it.
-- - snowflake_migrate() must name the user's tables in its statements.  It
--   is given snowflake_nextval() and the type snowflake by OID (constants
--   in its SQL-standard body), reads the tables through temporary views
--   that bind their names to OIDs and are used only if they read what it
--   checked, runs ALTER TABLE ... TYPE as the table's owner, and to the
--   type snowflake with a USING clause that stops the statement before
--   anything of another type can run, should the type's name mean another
--   type by then, and checks by OID afterwards that its statements changed
--   what it meant to change (see snowflake.migrate).
-- - While this script runs (CREATE EXTENSION, or ALTER EXTENSION UPDATE,
--   both of which the database owner may run), search_path is @extschema@
--   then pg_temp, with pg_catalog searched first.  What the creating role
--   put in @extschema@ beforehand can only make a statement fail: a CREATE
--   of a name that exists fails (there is no CREATE OR REPLACE or IF NOT
--   EXISTS here, and PostgreSQL refuses to let an extension take over an
--   object that is not already its member); each function called here
--   matches its arguments exactly, so an overload planted beside one of
--   ours makes a call ambiguous, never different; built-in functions come
--   from pg_catalog, first in the path, called with exact argument types.
--   The DO block below drops a schema snowflake only if it is empty.

--
-- Generating IDs
--

CREATE FUNCTION snowflake_nextval()
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_nextval'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_nextval() IS
'Next ID from this server''s generator: unique, and strictly increasing on the server';

CREATE FUNCTION snowflake_currval()
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_currval'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION snowflake_currval() IS
'The ID snowflake_nextval() last returned in this session';

CREATE FUNCTION snowflake_nextval(n integer)
RETURNS SETOF bigint
AS 'MODULE_PATHNAME', 'snowflake_nextval_batch'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE ROWS 1000;

COMMENT ON FUNCTION snowflake_nextval(integer) IS
'n new IDs in increasing order, reserved in one step, for bulk loads';

--
-- Reading IDs: parts, time, text form
--


CREATE FUNCTION snowflake_parse(id bigint,
                                OUT created_at timestamptz,
                                OUT worker_id integer,
                                OUT sequence integer)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_parse'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_parse(bigint) IS
'Splits an ID into its creation time, worker id and sequence number';

CREATE FUNCTION snowflake_to_timestamptz(id bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'snowflake_to_timestamptz'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_to_timestamptz(bigint) IS
'The instant, to the millisecond, an ID was created';

CREATE FUNCTION snowflake_min_id(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_min_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_min_id(timestamptz) IS
'Smallest ID any worker could issue in the millisecond of the instant';

CREATE FUNCTION snowflake_max_id(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_max_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_max_id(timestamptz) IS
'Largest ID any worker could issue in the millisecond of the instant';

CREATE FUNCTION snowflake_compose(created_at timestamptz,
                                  worker_id integer,
                                  sequence integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_compose_sql'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_compose(timestamptz, integer, integer) IS
'The ID made of this creation time, worker id and sequence number';

CREATE FUNCTION snowflake_range_min_id(range tstzrange)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_range_min_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_range_min_id(tstzrange) IS
'Smallest ID created within the range, clamped to the layout''s lifetime (0 if none)';

CREATE FUNCTION snowflake_range_max_id(range tstzrange)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_range_max_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_range_max_id(tstzrange) IS
'Largest ID created within the range, clamped to the layout''s lifetime (-1 if none)';

CREATE FUNCTION snowflake_in_range_support(internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'snowflake_in_range_support'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_in_range_support(internal) IS
'Planner support for bigint <@ tstzrange: rewrites it into ID comparisons';

CREATE FUNCTION snowflake_in_range(id bigint, range tstzrange)
RETURNS boolean
AS 'MODULE_PATHNAME', 'snowflake_in_range'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@.snowflake_in_range_support;

COMMENT ON FUNCTION snowflake_in_range(bigint, tstzrange) IS
'Whether an ID was created within the time range';

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
'An ID as 13 Crockford base32 characters, which sort as the IDs do';

CREATE FUNCTION snowflake_decode(text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_decode(text) IS
'Reads the 13-character base32 form written by snowflake_encode';
--
-- Monitoring
--

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
    OUT marks_by_callers bigint,
    OUT marks_ahead bigint,
    OUT clock_rollbacks bigint,
    OUT largest_rollback_ms bigint,
    OUT borrows bigint,
    OUT waits bigint,
    OUT wait_time_ms double precision,
    OUT refusals bigint,
    OUT stats_reset timestamptz,
    OUT lease_state text,
    OUT lease_expires timestamptz,
    OUT lease_ceiling bigint,
    OUT lease_headroom_ms bigint,
    OUT lease_renewals bigint,
    OUT lease_failures bigint,
    OUT lease_error text)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_stats_1_4'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_stats() IS
'The generator''s settings, state and counters';

CREATE VIEW snowflake_stats AS
    SELECT * FROM snowflake_stats();

COMMENT ON VIEW snowflake_stats IS
'One row: the generator''s settings, state and counters';

COMMENT ON COLUMN snowflake_stats.worker_id IS
'The worker id in use, configured or leased from the registry; NULL while there is none';

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
'Marks written since the reset, each a WAL flush and a file fsync: marks_by_callers + marks_ahead';

COMMENT ON COLUMN snowflake_stats.marks_by_callers IS
'Marks written by calls that crossed the mark and waited for the write';

COMMENT ON COLUMN snowflake_stats.marks_ahead IS
'Marks written ahead of need by the background mark writer, off the callers'' path';

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

COMMENT ON COLUMN snowflake_stats.lease_state IS
'Lease: none (no registry), claiming, held, registry unreachable, lost, refused or standby';

COMMENT ON COLUMN snowflake_stats.lease_expires IS
'When the lease lapses unless renewed, on the registry''s clock (NULL without a lease)';

COMMENT ON COLUMN snowflake_stats.lease_ceiling IS
'The highest ID the lease lets this server issue before it is renewed';

COMMENT ON COLUMN snowflake_stats.lease_headroom_ms IS
'How far ahead of the clock the ceiling is, in ms: how long IDs go on without the registry';

COMMENT ON COLUMN snowflake_stats.lease_renewals IS
'Renewals of the lease since the server started';

COMMENT ON COLUMN snowflake_stats.lease_failures IS
'Attempts to claim or renew a lease that failed since the server started';

COMMENT ON COLUMN snowflake_stats.lease_error IS
'The last problem with the registry, NULL if none since the last success';

GRANT SELECT ON snowflake_stats TO PUBLIC;

CREATE FUNCTION snowflake_stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'snowflake_stats_reset'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_stats_reset() IS
'Zeroes the counters of snowflake_stats; superusers and roles granted EXECUTE';

REVOKE ALL ON FUNCTION snowflake_stats_reset() FROM PUBLIC;

--
-- The extension's own schema
--
-- The worker-id registry and the functions that do the work behind the
-- public ones live in a schema of their own, created here and dropped with
-- the extension, so that tools which read the application's schema (Rails'
-- schema dumper, Alembic, Prisma) never see them, and so that they sit
-- where only a superuser may create, rename or replace anything.  A schema
-- of that name is never taken over (its owner could alter it or add to
-- it).  An empty one, as Rails' schema.rb creates before it enables
-- extensions, is dropped and made anew; DROP SCHEMA waits for anything
-- being created in it and refuses if the schema holds anything.

DO $$
BEGIN
    IF pg_catalog.to_regnamespace('snowflake') IS NOT NULL THEN
        BEGIN
            DROP SCHEMA snowflake;
        EXCEPTION WHEN dependent_objects_still_exist THEN
            RAISE EXCEPTION 'schema "snowflake" already exists'
                USING ERRCODE = 'duplicate_schema',
                      DETAIL = 'The extension keeps its worker-id registry in a schema of its own named snowflake.  It takes the place of an empty schema of that name, but not of one that holds objects or is the extension''s own schema.',
                      HINT = 'Move the objects out of the schema snowflake or rename it (ALTER SCHEMA snowflake RENAME TO ...), then create or update the extension; its functions may go in any other schema.';
        END;
    END IF;
END
$$;

CREATE SCHEMA snowflake;

COMMENT ON SCHEMA snowflake IS
'The snowflake extension''s registry and internal functions, kept out of the application''s schema';

GRANT USAGE ON SCHEMA snowflake TO PUBLIC;

--
-- The column type snowflake
--
-- An opt-in type for keys: "id snowflake PRIMARY KEY DEFAULT
-- snowflake_nextval()".  To PostgreSQL it is a bigint: 8 bytes passed by
-- value, bigint's decimal text and binary forms, and an implicit cast to
-- bigint WITHOUT FUNCTION (the same bytes, so free), through which it uses
-- bigint's operators, functions and operator classes (indexes, sorting,
-- hashing, foreign keys to and from bigint columns, partitioning), as
-- varchar uses text's.  To JSON it is a type of no special kind, with no
-- cast to json, so to_json(), row_to_json(), json_agg() and the rest write
-- it as a string of its text output, "250592571728859136", which JavaScript
-- cannot round as it rounds a JSON number above 2^53.
--
-- It has no operators of its own: an expression made from it (id + 1,
-- max(id)) is a bigint, and ::snowflake makes a string of it again.  Its
-- category is numeric ('N', not preferred), as bigint's is, so that a CASE,
-- COALESCE, UNION or VALUES that mixes it with bigint resolves to bigint
-- (values of two categories cannot be mixed at all).  The casts to it from
-- bigint, integer and smallint refuse a negative number, as its input
-- functions do, and apply on assignment (INSERT, UPDATE, COPY, a column
-- default such as snowflake_nextval(), a function's result), never
-- implicitly: with implicit casts both ways, an expression mixing the two
-- types would take whichever came first, and bigint values would meet the
-- check at run time.  A value is any bigint from 0 up, whatever the layout
-- settings, so that a dump restores on any server.
--
-- The type's input and output functions and the casts' functions are bound
-- by OID when created, and none looks anything up by name when it runs.  A
-- type of that name in the extension's schema (the row type of a table
-- called snowflake, say) would make CREATE TYPE fail with less to go on.

DO $$
BEGIN
    IF pg_catalog.to_regtype('@extschema@.snowflake') IS NOT NULL THEN
        RAISE EXCEPTION 'type "snowflake" already exists in the extension''s schema'
            USING ERRCODE = 'duplicate_object',
                  DETAIL = 'The extension adds a column type named snowflake to its schema; a type of that name, or a table (whose row type has its name), is there already.',
                  HINT = 'Rename that table or type (ALTER TABLE snowflake RENAME TO ..., or ALTER TYPE), then create or update the extension.';
    END IF;
END
$$;

CREATE TYPE @extschema@.snowflake;

CREATE FUNCTION @extschema@.snowflake_in(cstring)
RETURNS @extschema@.snowflake
AS 'MODULE_PATHNAME', 'snowflake_in'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_in(cstring) IS
'Text input of type snowflake: a decimal bigint, refused if negative';

CREATE FUNCTION @extschema@.snowflake_out(@extschema@.snowflake)
RETURNS cstring
AS 'MODULE_PATHNAME', 'snowflake_out'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_out(@extschema@.snowflake) IS
'Text output of type snowflake: the decimal number, as for bigint';

CREATE FUNCTION @extschema@.snowflake_recv(internal)
RETURNS @extschema@.snowflake
AS 'MODULE_PATHNAME', 'snowflake_recv'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_recv(internal) IS
'Binary input of type snowflake: bigint''s eight bytes, refused if negative';

CREATE FUNCTION @extschema@.snowflake_send(@extschema@.snowflake)
RETURNS bytea
AS 'MODULE_PATHNAME', 'snowflake_send'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_send(@extschema@.snowflake) IS
'Binary output of type snowflake: bigint''s eight bytes';

CREATE TYPE @extschema@.snowflake (
    INPUT = @extschema@.snowflake_in,
    OUTPUT = @extschema@.snowflake_out,
    RECEIVE = @extschema@.snowflake_recv,
    SEND = @extschema@.snowflake_send,
    INTERNALLENGTH = 8,
    PASSEDBYVALUE,
    ALIGNMENT = double,
    STORAGE = plain,
    CATEGORY = 'N',
    PREFERRED = false
);

COMMENT ON TYPE @extschema@.snowflake IS
'A snowflake ID: a bigint to PostgreSQL, a string to to_json() and the other JSON functions';

CREATE CAST (@extschema@.snowflake AS bigint)
WITHOUT FUNCTION
AS IMPLICIT;

COMMENT ON CAST (@extschema@.snowflake AS bigint) IS
'Free (the same bytes): lends the type bigint''s operators, functions and indexes';

CREATE FUNCTION @extschema@.snowflake(bigint)
RETURNS @extschema@.snowflake
AS 'MODULE_PATHNAME', 'snowflake_from_bigint'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake(bigint) IS
'Cast from bigint to snowflake: refuses a negative number';

CREATE CAST (bigint AS @extschema@.snowflake)
WITH FUNCTION @extschema@.snowflake(bigint)
AS ASSIGNMENT;

COMMENT ON CAST (bigint AS @extschema@.snowflake) IS
'On assignment or explicit: a bigint as a snowflake, refused if negative';

CREATE FUNCTION @extschema@.snowflake(integer)
RETURNS @extschema@.snowflake
AS 'MODULE_PATHNAME', 'snowflake_from_integer'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake(integer) IS
'Cast from integer to snowflake: refuses a negative number';

CREATE CAST (integer AS @extschema@.snowflake)
WITH FUNCTION @extschema@.snowflake(integer)
AS ASSIGNMENT;

COMMENT ON CAST (integer AS @extschema@.snowflake) IS
'On assignment or explicit: an integer as a snowflake, refused if negative';

CREATE FUNCTION @extschema@.snowflake(smallint)
RETURNS @extschema@.snowflake
AS 'MODULE_PATHNAME', 'snowflake_from_smallint'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake(smallint) IS
'Cast from smallint to snowflake: refuses a negative number';

CREATE CAST (smallint AS @extschema@.snowflake)
WITH FUNCTION @extschema@.snowflake(smallint)
AS ASSIGNMENT;

COMMENT ON CAST (smallint AS @extschema@.snowflake) IS
'On assignment or explicit: a smallint as a snowflake, refused if negative';

--
-- Moving a table off serial, bigserial or identity
--

-- The work is done by snowflake.migrate(), in the schema snowflake, which
-- looks up nothing at run time outside pg_catalog and that schema.  The
-- public snowflake_migrate() at the end of this section is SQL-standard:
-- its call of snowflake_nextval() and of snowflake.migrate(), and the
-- function and the type it passes on by OID, were bound to those objects
-- when it was created.

CREATE FUNCTION snowflake.read_relation(rel regclass, col name)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
-- What snowflake_migrate reads from the user's relations, as a jsonb
-- object: last_value and is_called of a sequence; min and max of the
-- column col of a table, as bigint.  A query can only name the relation, by its
-- schema-qualified name, and a concurrent ALTER SCHEMA ... RENAME can make
-- that name mean another relation, such as a view whose functions would
-- run as the caller.  So the query is first stored as a temporary view:
-- CREATE VIEW binds the names to OIDs (with dependencies) and runs
-- nothing.  The view is read only if it reads rel and no other relation,
-- and it is dropped again.
DECLARE
    v_name text := rel::text;   -- schema-qualified, as the query names it
    v_view oid;
    v_row  jsonb;
BEGIN
    IF NOT has_database_privilege(current_database(), 'TEMPORARY') THEN
        RAISE EXCEPTION 'permission denied to create temporary tables in database "%"', current_database()
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'snowflake_migrate reads the table through a temporary view, which binds the table''s name to the table before anything is read.',
                  HINT = format('Grant the privilege with GRANT TEMPORARY ON DATABASE %I TO %I, or run snowflake_migrate as a role that has it.',
                                current_database(), current_user);
    END IF;
    EXECUTE format('CREATE TEMPORARY VIEW snowflake_migrate_read AS SELECT %s FROM %s',
                   CASE WHEN (SELECT c.relkind FROM pg_class c WHERE c.oid = rel) = 'S'
                        THEN 'last_value, is_called'
                        ELSE format('min(%1$I)::bigint AS min, max(%1$I)::bigint AS max', col) END,
                   v_name);
    v_view := 'pg_temp.snowflake_migrate_read'::regclass;
    IF EXISTS (SELECT FROM pg_rewrite r
                 JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
                WHERE r.ev_class = v_view
                  AND NOT (d.refclassid = 'pg_class'::regclass AND d.refobjid IN (v_view, rel)))
       OR NOT EXISTS (SELECT FROM pg_rewrite r
                        JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
                       WHERE r.ev_class = v_view
                         AND d.refclassid = 'pg_class'::regclass AND d.refobjid = rel) THEN
        RAISE EXCEPTION 'a schema or relation was renamed while snowflake_migrate ran'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('The name %s no longer means the relation snowflake_migrate checked, now named %s; nothing was read from it.',
                                  v_name, rel),
                  HINT = 'Check the names of the table and its schema, and run snowflake_migrate again.';
    END IF;
    EXECUTE 'SELECT pg_catalog.to_jsonb(r) FROM pg_temp.snowflake_migrate_read r' INTO v_row;
    DROP VIEW pg_temp.snowflake_migrate_read;
    RETURN v_row;
END
$function$;

COMMENT ON FUNCTION snowflake.read_relation(regclass, name) IS
'Internal to snowflake_migrate: reads a relation through a view bound to its OID';

CREATE FUNCTION snowflake.default_calls(rel regclass, attnum smallint, func regprocedure,
                                        id_type regtype)
RETURNS boolean
LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- the stored expression tree: one call of func, with no other node
    -- inside it (no argument, no cast), or that call under the implicit
    -- cast from bigint that a column of type id_type puts around it; and a
    -- catalog dependency on func
    SELECT EXISTS (
        SELECT FROM pg_attrdef d
         WHERE d.adrelid = rel AND d.adnum = attnum
           AND (d.adbin::text ~ ('^\{FUNCEXPR :funcid ' || func::oid || ' [^{]*\}$')
                OR d.adbin::text ~ ('^\{FUNCEXPR :funcid '
                                    || (SELECT c.castfunc FROM pg_cast c
                                         WHERE c.castsource = 'pg_catalog.int8'::regtype
                                           AND c.casttarget = id_type)
                                    || ' :funcresulttype ' || id_type::oid
                                    || ' [^{]* :funcformat 2 [^{]* :args \(\{FUNCEXPR :funcid '
                                    || func::oid || ' [^{]*\}\) [^{]*\}$'))
           AND EXISTS (SELECT FROM pg_depend p
                        WHERE p.classid = 'pg_attrdef'::regclass AND p.objid = d.oid
                          AND p.refclassid = 'pg_proc'::regclass AND p.refobjid = func))
$function$;

COMMENT ON FUNCTION snowflake.default_calls(regclass, smallint, regprocedure, regtype) IS
'Internal to snowflake_migrate: whether a column''s default is nothing but a call of the function';

CREATE FUNCTION snowflake.refuse_renamed(table_name text, type_name text)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
-- The ELSE branch of the USING clause with which snowflake_migrate changes
-- a column's type (see snowflake.migrate): called only if the table's name,
-- or the type's (type_name, for the type snowflake), read in the same
-- statement as ALTER TABLE read it, no longer means the table it checked or
-- the extension's type.  It is IMMUTABLE so that the planner calls it while
-- it plans the clause, before the rewrite and before any constraint of
-- another table, or anything of another type, could run; it never returns,
-- whatever its arguments, so no caller can tell it from a constant.
BEGIN
    RAISE EXCEPTION 'a schema or relation was renamed while snowflake_migrate ran'
        USING ERRCODE = 'object_not_in_prerequisite_state',
              DETAIL = format('The name %s no longer means the table snowflake_migrate locked and checked%s, so ALTER TABLE would have changed another table or to another type; nothing was changed.',
                              table_name,
                              CASE WHEN type_name IS NOT NULL
                                   THEN format(', or the name %s the extension''s type snowflake', type_name)
                                   ELSE '' END),
              HINT = 'Check the names of the table, its schema and the extension''s schema, and run snowflake_migrate again.';
END
$function$;

COMMENT ON FUNCTION snowflake.refuse_renamed(text, text) IS
'Internal to snowflake_migrate: the error when a table''s or type''s name meant another one';

CREATE FUNCTION snowflake.migrate(tbl regclass,
                                  col name,
                                  dry_run boolean,
                                  widen boolean,
                                  to_type boolean,
                                  first_id bigint,
                                  nextval regprocedure,
                                  id_type regtype)
RETURNS TABLE (kind text, step integer, statement text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
-- The body of snowflake_migrate(tbl, col, dry_run, widen, to_type);
-- first_id is an ID the caller drew from snowflake_nextval() for it, and
-- nextval and id_type are the extension's snowflake_nextval() and type
-- snowflake, bound by OID in the caller (see there).
--
-- Moves one column off a sequence default (serial, bigserial, or any
-- DEFAULT nextval('seq')) or an identity onto DEFAULT snowflake_nextval().
-- With to_type, it also changes the column, and every column that
-- references it through foreign keys, to the type snowflake (a column
-- that defaults to snowflake_nextval() already gets only that).  Returns the statements it ran (kind 'do') and the statements that undo
-- them (kind 'undo'), each numbered from 1 in the order to run them.  All
-- DDL goes through ALTER TABLE / ALTER SEQUENCE / CREATE SEQUENCE, so the
-- usual ownership checks apply and the result dumps and restores like any
-- hand-written schema.  A sequence kept for the undo gets a COMMENT that
-- says so (\ds+ would show an unexplained orphan); the undo restores the
-- comment it had.  Every name is quoted: relations through regclass
-- output (schema-qualified, since search_path is only pg_catalog here),
-- columns and roles through %I.
--
-- Outside a dry run, the table is locked before anything else is read
-- from the catalog, and the tables to widen or change to the type are
-- locked before their foreign-key graph is trusted: a migration or an
-- ALTER TABLE that held a lock we waited for has ended by then, and in
-- READ COMMITTED every statement here sees what it committed.
--
-- Names.  The statements must name the table, its sequence,
-- snowflake_nextval() and the type snowflake by schema-qualified name,
-- and the owner of a schema (the database owner, for public) may rename
-- it and create another of that name, also while this runs.  Locks by
-- name are checked by OID once taken; the table and the sequence are read
-- through views bound to them (snowflake.read_relation); ALTER TABLE ...
-- TYPE, the one statement here that evaluates expressions of the table
-- (its constraints), runs as the table's owner, so that a name redirected
-- to another owner's table is refused and the owner's expressions never
-- run with more privileges than the owner's; and after the statements
-- ran, their outcome is checked by OID, and anything not where it should
-- be raises an error, which rolls them back.
--
-- A check afterwards comes too late for ALTER TABLE ... TYPE, though: it
-- runs code inside the statement, as the table's owner, who may be a
-- superuser.  A table planted under the table's name gets its CHECK
-- constraints run by the rewrite, and a type planted under the type's
-- name (a domain with a CHECK, a cast with a function) gets its code run
-- by the conversion.  So each ALTER COLUMN ... TYPE carries its own check,
-- in its USING clause:
--   USING CASE WHEN 'public.orders'::regclass = <its OID>
--               AND 'public.snowflake'::regtype = <its OID> THEN id
--              ELSE snowflake.refuse_renamed('public.orders', ...) END
-- (the type's part with to_type only; bigint is pg_catalog's).  ALTER
-- TABLE looks up the table's name, then parses the clause, reading the
-- literals, then looks up the type's name, with no code of anyone's run
-- in between; the planner then folds the CASE (all constants), to the
-- column if the names meant our table and type, and otherwise calls the
-- IMMUTABLE refuse_renamed(), which raises, before a row is converted or
-- checked.  (Partitions are found by OID, not by name.)
DECLARE
    v_nextval   regprocedure := nextval;    -- the extension's snowflake_nextval()
    v_newdef    text;       -- a call of it, schema-qualified
    v_typename  text;       -- the type snowflake, schema-qualified
    v_rel       record;     -- the table: relname, relkind, relowner
    v_att       record;     -- the column: attnum, atttypid, attidentity, ...
    v_attrdef   oid;        -- its pg_attrdef row, if any
    v_default   text;       -- its default expression, if any
    v_tree      text;       -- the same as a node tree, without locations
    v_tags      text[];     -- the tree's nodes, outermost first
    v_funcs     oid[];      -- the functions it calls, outermost first
    v_formats   integer[];  -- how each call was written (2: implicit cast)
    v_seq       oid;        -- the sequence behind the default or identity
    v_seqname   text;       -- its name, schema-qualified and quoted
    v_seqnote   text;       -- its comment before, for the undo
    v_keptnote  text;       -- the comment on the sequence kept for the undo
    v_seqnsp    record;     -- identity: its schema (oid, nspname)
    v_owned     boolean := false;   -- the sequence is OWNED BY the column
    v_seqdef    record;     -- identity: the sequence's options
    v_last      bigint;     -- identity: the sequence's position
    v_called    boolean;
    v_seqopts   text;       -- identity: those options as SQL
    v_done      boolean;    -- the column defaults to snowflake_nextval() already
    v_narrow    record;     -- a column to widen or change to the type
    v_widen     text[];     -- "table.column (type)" for messages
    v_tables    regclass[]; -- tables to lock: tbl, then widened ones
    v_locked    regclass[] := '{}'; -- tables locked so far
    v_rewritten regclass[]; -- tables with columns to widen or change
    v_clauses   text[];     -- their ALTER COLUMN clauses, per table in
                            -- v_rewritten
    v_back      text[];     -- to_type: the clauses that undo them
    v_owners    oid[];      -- the owner of each v_rewritten
    v_wcols     text[];     -- the columns, as "oid attnum"
    v_blocked   text[];     -- to_type: what ALTER COLUMN ... TYPE would refuse
    v_first_id  bigint := first_id;
    v_max       bigint;
    v_read      jsonb;
    v_do        text[] := '{}';
    v_undo      text[] := '{}';
    v_widen_at  integer;    -- v_do[v_widen_at ...]: the type changes
    v_me        oid;        -- current_user
    v_role      text;       -- the setting role, to come back to
    v_wrong     text[] := '{}'; -- what the statements did not do
    i           integer;
BEGIN
    IF tbl IS NULL OR col IS NULL OR dry_run IS NULL OR widen IS NULL OR to_type IS NULL THEN
        RAISE EXCEPTION 'arguments of snowflake_migrate must not be null'
            USING ERRCODE = 'null_value_not_allowed',
                  DETAIL = 'A null table usually comes from to_regclass() on a name that does not exist.',
                  HINT = 'Pass the table, the column name, and true or false for dry_run, widen and to_type.';
    END IF;
    IF first_id IS NULL OR nextval IS NULL OR id_type IS NULL THEN
        RAISE EXCEPTION 'snowflake.migrate() takes an ID, the extension''s snowflake_nextval() and its type snowflake'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Call snowflake_migrate() instead.';
    END IF;
    v_me := (SELECT r.oid FROM pg_roles r WHERE r.rolname = current_user);

    -- Under REPEATABLE READ or SERIALIZABLE every statement here reads as
    -- of the transaction's snapshot, taken before the lock below was
    -- granted: a migration, a new foreign key or rows committed while we
    -- waited would go unseen.
    IF NOT dry_run AND current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'snowflake_migrate must run in a READ COMMITTED transaction'
            USING ERRCODE = 'invalid_transaction_state',
                  DETAIL = format('This transaction is %s, so the function would read the catalog and the table as they were before it locked the table, missing what other transactions committed while it waited.',
                                  upper(current_setting('transaction_isolation'))),
                  HINT = 'Run it in a transaction started with BEGIN ISOLATION LEVEL READ COMMITTED (the default level), or pass dry_run => true to only see the statements.';
    END IF;

    -- The table: checked, locked (not in a dry run), and checked again,
    -- since it may have changed while we waited.  The first checks keep
    -- a role that may not alter the table from queueing for its lock.
    LOOP
        SELECT c.relname, c.relkind, c.relowner
          INTO v_rel
          FROM pg_class c
         WHERE c.oid = tbl;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'relation with OID % does not exist', tbl::oid
                USING ERRCODE = 'undefined_table';
        END IF;
        IF v_rel.relkind NOT IN ('r', 'p') THEN
            RAISE EXCEPTION '"%" is not a table', v_rel.relname
                USING ERRCODE = 'wrong_object_type',
                      DETAIL = 'snowflake_migrate changes the default of a column of an ordinary or partitioned table.';
        END IF;
        -- ALTER TABLE checks this too; checking first makes dry runs honest.
        IF NOT pg_has_role(v_rel.relowner, 'USAGE') THEN
            RAISE EXCEPTION 'must be owner of table %', v_rel.relname
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = 'snowflake_migrate runs ALTER TABLE, which only the table''s owner (or a member of the owning role) may run.';
        END IF;
        EXIT WHEN dry_run OR cardinality(v_locked) > 0;
        EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);
        v_locked := ARRAY[tbl];
    END LOOP;

    SELECT a.attnum, a.atttypid, a.attidentity, a.attgenerated,
           format_type(a.atttypid, a.atttypmod) AS typname
      INTO v_att
      FROM pg_attribute a
     WHERE a.attrelid = tbl AND a.attname = col
       AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation "%" does not exist', col, v_rel.relname
            USING ERRCODE = 'undefined_column',
                  HINT = 'Column names are case-sensitive here: pass the name as it is stored, such as ''Id'' for a column created as "Id".';
    END IF;

    SELECT d.oid, pg_get_expr(d.adbin, d.adrelid),
           regexp_replace(d.adbin::text, ' :location -?[0-9]+', '', 'g')
      INTO v_attrdef, v_default, v_tree
      FROM pg_attrdef d
     WHERE d.adrelid = tbl AND d.adnum = v_att.attnum;

    SELECT format('%I.%I()', n.nspname, p.proname)
      INTO v_newdef
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE p.oid = v_nextval;
    SELECT format('%I.%I', n.nspname, t.typname)
      INTO v_typename
      FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
     WHERE t.oid = id_type;

    -- Already done: the default calls our function (a catalog dependency)
    -- and is nothing but that call, or that call under the cast to the
    -- type snowflake.  With to_type, the type change may remain to do.
    v_done := snowflake.default_calls(tbl, v_att.attnum, v_nextval, id_type);
    IF v_done AND NOT to_type THEN
        RAISE NOTICE 'column "%" of table "%" already defaults to snowflake_nextval(), nothing to do',
            col, v_rel.relname;
        RETURN;
    END IF;

    IF v_done THEN
        NULL;   -- (to_type) only the type changes
    ELSIF v_att.attgenerated <> '' THEN
        RAISE EXCEPTION 'column "%" of table "%" is a generated column', col, v_rel.relname
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'snowflake_migrate moves a column off a sequence default (serial, bigserial) or an identity.';
    ELSIF v_att.attidentity IN ('a', 'd') THEN
        -- The identity sequence is an internal dependency of the column.
        SELECT d.objid INTO v_seq
          FROM pg_depend d
         WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
           AND d.refobjid = tbl AND d.refobjsubid = v_att.attnum AND d.deptype = 'i';
        IF v_seq IS NULL THEN
            RAISE EXCEPTION 'identity column "%" of table "%" has no sequence', col, v_rel.relname
                USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
    ELSIF v_attrdef IS NOT NULL THEN
        -- The default must be nothing but nextval() of one sequence, or it
        -- does something we cannot undo.  Read from the stored expression
        -- tree, not from its text (whose quoting of odd names varies):
        -- nextval(<regclass constant>), possibly under the implicit cast
        -- to the column's type that integer and smallint columns get.  The
        -- constant is the one relation the default depends on.
        SELECT array_agg(m.v[1] ORDER BY m.n) INTO v_tags
          FROM regexp_matches(v_tree, '\{([A-Z_]+)', 'g') WITH ORDINALITY AS m (v, n);
        SELECT array_agg(m.v[1]::oid ORDER BY m.n) INTO v_funcs
          FROM regexp_matches(v_tree, ':funcid ([0-9]+)', 'g') WITH ORDINALITY AS m (v, n);
        SELECT array_agg(m.v[1]::integer ORDER BY m.n) INTO v_formats
          FROM regexp_matches(v_tree, ':funcformat ([0-9]+)', 'g') WITH ORDINALITY AS m (v, n);
        IF v_tree ~ (':consttype ' || 'pg_catalog.regclass'::regtype::oid || ' ')
           AND v_tree ~ ':constisnull false '
           AND (   (v_tags = '{FUNCEXPR,CONST}'
                    AND v_funcs = ARRAY['pg_catalog.nextval(regclass)'::regprocedure::oid])
                OR (v_tags = '{FUNCEXPR,FUNCEXPR,CONST}'
                    AND v_formats[1] = 2
                    AND v_funcs = ARRAY[(SELECT c.castfunc FROM pg_cast c
                                          WHERE c.castsource = 'pg_catalog.int8'::regtype
                                            AND c.casttarget = v_att.atttypid),
                                        'pg_catalog.nextval(regclass)'::regprocedure::oid])) THEN
            SELECT min(d.refobjid) INTO v_seq
              FROM pg_depend d JOIN pg_class s ON s.oid = d.refobjid AND s.relkind = 'S'
             WHERE d.classid = 'pg_attrdef'::regclass AND d.objid = v_attrdef
               AND d.refclassid = 'pg_class'::regclass
            HAVING count(*) = 1;
        END IF;
        IF v_seq IS NULL THEN
            RAISE EXCEPTION 'column "%" of table "%" has a default other than a sequence', col, v_rel.relname
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = format('Its default is %s; snowflake_migrate only replaces nextval(''sequence'') (serial, bigserial) and identity.', v_default),
                      HINT = format('If the column should take snowflake IDs anyway, run ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s yourself.', tbl, col, v_newdef);
        END IF;
        v_owned := EXISTS (SELECT FROM pg_depend d
                            WHERE d.classid = 'pg_class'::regclass AND d.objid = v_seq
                              AND d.refclassid = 'pg_class'::regclass AND d.refobjid = tbl
                              AND d.refobjsubid = v_att.attnum AND d.deptype = 'a');
    ELSE
        RAISE EXCEPTION 'column "%" of table "%" has no default', col, v_rel.relname
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'snowflake_migrate moves a column off a sequence default (serial, bigserial) or an identity; this column has neither.',
                  HINT = format('Check the column name.  If the column should take snowflake IDs anyway, run ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s yourself.', tbl, col, v_newdef);
    END IF;
    v_seqname := v_seq::regclass::text;
    v_seqnote := obj_description(v_seq, 'pg_class');
    v_keptnote := format('Unused since %s.%I moved to snowflake_nextval(); kept for its undo, drop it when not needed',
                         tbl, col);

    IF v_att.atttypid NOT IN ('int8'::regtype, 'int4'::regtype, 'int2'::regtype, id_type) THEN
        RAISE EXCEPTION 'column "%" of table "%" is of type %, not bigint', col, v_rel.relname, v_att.typname
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = 'Snowflake IDs are bigint values.';
    END IF;

    -- Columns too narrow for snowflake IDs (with to_type: every integer
    -- column not yet of the type): this one, and every column that
    -- references it through foreign keys, directly or in a chain (only the
    -- referencing column that maps to ours in a multi-column key).
    -- Top-level constraints only: ALTER TABLE on a partitioned table
    -- reaches its partitions.  Outside a dry run, when widening or
    -- changing to the type, lock the tables found and look again, until no
    -- new one turns up: a foreign key added to one of them while we waited
    -- for its lock is then in the graph.
    LOOP
        v_widen := '{}';
        v_tables := ARRAY[tbl];
        v_rewritten := '{}';
        v_clauses := '{}';
        v_back := '{}';
        v_owners := '{}';
        v_wcols := '{}';
        FOR v_narrow IN
            WITH RECURSIVE refs (relid, attnum) AS (
                SELECT tbl::oid, v_att.attnum
                UNION
                SELECT c.conrelid, k.conkey
                  FROM refs r
                  JOIN pg_constraint c
                    ON c.contype = 'f' AND c.confrelid = r.relid AND c.conparentid = 0
                 CROSS JOIN LATERAL unnest(c.conkey, c.confkey) AS k (conkey, confkey)
                 WHERE k.confkey = r.attnum
            )
            SELECT r.relid::regclass AS rel, a.attname, a.attnum,
                   format_type(a.atttypid, a.atttypmod) AS typname, c.relname, c.relowner
              FROM refs r
              JOIN pg_attribute a ON a.attrelid = r.relid AND a.attnum = r.attnum
              JOIN pg_class c ON c.oid = r.relid
             WHERE a.atttypid IN ('int2'::regtype, 'int4'::regtype)
                OR (to_type AND a.atttypid = 'int8'::regtype)
             ORDER BY r.relid <> tbl, r.relid::regclass::text COLLATE "C", a.attname COLLATE "C"
        LOOP
            v_widen := v_widen || format('%s.%I (%s)', v_narrow.rel, v_narrow.attname, v_narrow.typname);
            v_wcols := v_wcols || format('%s %s', v_narrow.rel::oid, v_narrow.attnum);
            IF NOT v_narrow.rel = ANY (v_tables) THEN
                v_tables := v_tables || v_narrow.rel;
            END IF;
            IF NOT v_narrow.rel = ANY (v_rewritten) THEN
                v_rewritten := v_rewritten || v_narrow.rel;
                v_owners := v_owners || v_narrow.relowner;
                v_clauses := v_clauses || ''::text;
                v_back := v_back || ''::text;
                i := cardinality(v_rewritten);
            ELSE
                i := array_position(v_rewritten, v_narrow.rel);
                v_clauses[i] := v_clauses[i] || ', ';
                v_back[i] := v_back[i] || ', ';
            END IF;
            -- with the check of the names: see the comment at the top
            v_clauses[i] := v_clauses[i]
                || format('ALTER COLUMN %1$I TYPE %2$s USING CASE WHEN %3$L::pg_catalog.regclass::pg_catalog.oid OPERATOR(pg_catalog.=) %4$s::pg_catalog.oid%5$s THEN %1$I ELSE snowflake.refuse_renamed(%3$L, %6$L) END',
                          v_narrow.attname,
                          CASE WHEN to_type THEN v_typename ELSE 'bigint' END,
                          v_narrow.rel::text, v_narrow.rel::oid,
                          CASE WHEN to_type
                               THEN format(' AND %L::pg_catalog.regtype::pg_catalog.oid OPERATOR(pg_catalog.=) %s::pg_catalog.oid',
                                           v_typename, id_type::oid)
                               ELSE '' END,
                          CASE WHEN to_type THEN v_typename END);
            v_back[i] := v_back[i] || format('ALTER COLUMN %I TYPE bigint', v_narrow.attname);
            IF (widen OR to_type) AND NOT pg_has_role(v_narrow.relowner, 'USAGE') THEN
                RAISE EXCEPTION 'must be owner of table %', v_narrow.relname
                    USING ERRCODE = 'insufficient_privilege',
                          DETAIL = format('%s changes column %I of table %s, which references %s.%I, and only its owner may alter it.',
                                          CASE WHEN to_type THEN 'Changing to the type snowflake' ELSE 'Widening' END,
                                          v_narrow.attname, v_narrow.rel, tbl, col);
            END IF;
        END LOOP;
        EXIT WHEN dry_run OR NOT (widen OR to_type) OR v_tables <@ v_locked;
        EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE',
                       (SELECT string_agg(t::text, ', ' ORDER BY n)
                          FROM unnest(v_tables) WITH ORDINALITY AS u (t, n)
                         WHERE NOT t = ANY (v_locked)));
        v_locked := v_locked || ARRAY(SELECT t FROM unnest(v_tables) AS u (t)
                                       WHERE NOT t = ANY (v_locked));
    END LOOP;

    -- LOCK TABLE takes names; had one come to mean another table while we
    -- waited (a rename), what we read above would not be protected.
    IF EXISTS (SELECT FROM unnest(v_locked) AS u (t)
                WHERE NOT EXISTS (SELECT FROM pg_locks l
                                   WHERE l.locktype = 'relation' AND l.relation = t
                                     AND l.pid = pg_backend_pid()
                                     AND l.mode = 'AccessExclusiveLock' AND l.granted)) THEN
        RAISE EXCEPTION 'a table was renamed or replaced while snowflake_migrate waited for its lock'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('The locks were taken by name on %s.', array_to_string(v_locked, ', ')),
                  HINT = 'Check the table''s name and run snowflake_migrate again.';
    END IF;

    IF cardinality(v_widen) > 0 AND NOT widen AND NOT to_type THEN
        RAISE EXCEPTION '%',
            CASE WHEN v_att.atttypid IN ('int2'::regtype, 'int4'::regtype)
                 THEN format('column "%s" of table "%s" is of type %s, too narrow for snowflake IDs',
                             col, v_rel.relname, v_att.typname)
                 ELSE format('columns referencing column "%s" of table "%s" are too narrow for snowflake IDs',
                             col, v_rel.relname)
            END
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = format('Snowflake IDs need bigint.  Columns to widen: %s.', array_to_string(v_widen, ', ')),
                  HINT = format('Pass widen => true to change them to bigint.  That rewrites %s with %s indexes and checks the foreign keys on those columns again, under ACCESS EXCLUSIVE locks held until the transaction ends.',
                                array_to_string(v_rewritten, ', '),
                                CASE WHEN cardinality(v_rewritten) = 1 THEN 'its' ELSE 'their' END);
    END IF;

    IF v_done AND cardinality(v_widen) = 0 THEN
        RAISE NOTICE 'column "%" of table "%" already defaults to snowflake_nextval() and is of type snowflake, as are the columns that reference it: nothing to do',
            col, v_rel.relname;
        RETURN;
    END IF;

    -- The kept copy of an identity sequence is a new sequence, created by
    -- the caller (this function is SECURITY INVOKER) and, for a member of
    -- the owning role, handed to the table's owner, which ALTER SEQUENCE
    -- allows only if that owner may create in the schema too.
    IF v_att.attidentity IN ('a', 'd') THEN
        SELECT n.oid, n.nspname INTO v_seqnsp
          FROM pg_class s JOIN pg_namespace n ON n.oid = s.relnamespace
         WHERE s.oid = v_seq;
        IF NOT has_schema_privilege(v_seqnsp.oid, 'CREATE') THEN
            RAISE EXCEPTION 'must have CREATE privilege on schema % to migrate identity column "%" of table "%"',
                v_seqnsp.nspname, col, v_rel.relname
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = format('DROP IDENTITY drops the identity sequence %s, so snowflake_migrate keeps a copy of it for the undo script: a new sequence of the same name, created by the current role %I.',
                                      v_seqname, current_user),
                      HINT = format('Grant the privilege with GRANT CREATE ON SCHEMA %I TO %I, or run snowflake_migrate as a role that has it.',
                                    v_seqnsp.nspname, current_user);
        END IF;
        IF pg_get_userbyid(v_rel.relowner) <> current_user
           AND NOT (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user)
           AND NOT has_schema_privilege(v_rel.relowner, v_seqnsp.oid, 'CREATE') THEN
            RAISE EXCEPTION 'owner of table % must have CREATE privilege on schema % to migrate identity column "%"',
                v_rel.relname, v_seqnsp.nspname, col
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = format('The copy of the identity sequence %s that snowflake_migrate keeps for the undo script goes to the table''s owner %I, and only a role that may create in the schema can own it.',
                                      v_seqname, pg_get_userbyid(v_rel.relowner)),
                      HINT = format('Grant the privilege with GRANT CREATE ON SCHEMA %I TO %I.',
                                    v_seqnsp.nspname, pg_get_userbyid(v_rel.relowner));
        END IF;
    END IF;

    -- What ALTER COLUMN ... TYPE snowflake would refuse, checked here so
    -- that a dry run says it too: a column that a view, rule, function
    -- body, trigger, policy, publication's row filter or generated column
    -- uses, that is in a partition key, inherited, an identity (but the
    -- key's, dropped first), or of a typed table, and a table whose row
    -- type a column has.  The partitions and inheritance children of each
    -- table change too, and are checked by the column's name.  And the
    -- type refuses negative values.
    IF to_type AND cardinality(v_wcols) > 0 THEN
        v_blocked := ARRAY(
            WITH RECURSIVE tree (relid, attname, top) AS (
                SELECT a.attrelid, a.attname, a.attrelid
                  FROM unnest(v_wcols) AS u (c)
                  JOIN pg_attribute a ON a.attrelid = split_part(u.c, ' ', 1)::oid
                                     AND a.attnum = split_part(u.c, ' ', 2)::smallint
                UNION
                SELECT i.inhrelid, t.attname, t.top
                  FROM tree t JOIN pg_inherits i ON i.inhparent = t.relid
            ),
            col AS (
                SELECT t.relid, t.relid::regclass AS rel, t.top, a.attnum, a.attname,
                       a.attinhcount, a.attidentity, c.reloftype, c.reltype
                  FROM tree t
                  JOIN pg_attribute a ON a.attrelid = t.relid AND a.attname = t.attname
                                     AND NOT a.attisdropped
                  JOIN pg_class c ON c.oid = t.relid
            ),
            blocker (rel, attname, what) AS (
                SELECT c.rel, c.attname,
                       CASE d.classid
                           WHEN 'pg_rewrite'::regclass THEN
                               (SELECT CASE WHEN r.rulename = '_RETURN'
                                            THEN format('%s %s',
                                                        CASE v.relkind WHEN 'm' THEN 'materialized view'
                                                                       ELSE 'view' END,
                                                        v.oid::regclass)
                                            ELSE pg_describe_object(d.classid, d.objid, d.objsubid) END
                                  FROM pg_rewrite r JOIN pg_class v ON v.oid = r.ev_class
                                 WHERE r.oid = d.objid)
                           WHEN 'pg_attrdef'::regclass THEN
                               (SELECT format('generated column %I', g.attname)
                                  FROM pg_attrdef ad
                                  JOIN pg_attribute g ON g.attrelid = ad.adrelid AND g.attnum = ad.adnum
                                 WHERE ad.oid = d.objid)
                           ELSE pg_describe_object(d.classid, d.objid, d.objsubid)
                       END
                  FROM col c
                  JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = c.relid
                                  AND d.refobjsubid = c.attnum
                 WHERE d.classid IN ('pg_proc'::regclass, 'pg_rewrite'::regclass,
                                     'pg_trigger'::regclass, 'pg_policy'::regclass,
                                     'pg_publication_rel'::regclass)
                    OR (d.classid = 'pg_attrdef'::regclass
                        AND NOT EXISTS (SELECT FROM pg_attrdef ad
                                         WHERE ad.oid = d.objid AND ad.adrelid = c.relid
                                           AND ad.adnum = c.attnum))
                UNION ALL
                -- a partition key's column depends on its table (the
                -- columns an expression key uses too)
                SELECT c.rel, c.attname, format('the partition key of %s', c.rel)
                  FROM col c
                 WHERE EXISTS (SELECT FROM pg_depend d
                                WHERE d.classid = 'pg_class'::regclass AND d.objid = c.relid
                                  AND d.objsubid = c.attnum
                                  AND d.refclassid = 'pg_class'::regclass AND d.refobjid = c.relid
                                  AND d.refobjsubid = 0 AND d.deptype = 'i')
                UNION ALL
                SELECT c.rel, c.attname, 'inheritance (change it on the parent table)'
                  FROM col c WHERE c.relid = c.top AND c.attinhcount > 0
                UNION ALL
                SELECT c.rel, c.attname, 'an identity'
                  FROM col c WHERE c.attidentity <> '' AND NOT (c.top = tbl AND c.attname = col)
                UNION ALL
                SELECT c.rel, c.attname, format('the typed table %s (OF %s)', c.rel, c.reloftype::regtype)
                  FROM col c WHERE c.relid = c.top AND c.reloftype <> 0
                UNION ALL
                SELECT c.rel, c.attname, format('column %I of %s, whose type is the row type of %s',
                                                x.attname, x.attrelid::regclass, c.rel)
                  FROM col c
                  JOIN pg_attribute x ON x.atttypid = c.reltype AND x.attnum > 0 AND NOT x.attisdropped
            )
            SELECT DISTINCT format('%s.%I: %s', b.rel, b.attname, b.what)
              FROM blocker b
             ORDER BY 1);
        IF cardinality(v_blocked) > 0 THEN
            RAISE EXCEPTION 'cannot change column "%" of table "%" and the columns that reference it to type snowflake',
                col, v_rel.relname
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = format('ALTER TABLE ... ALTER COLUMN ... TYPE refuses a column used by a view, rule, function body, trigger, policy, publication''s row filter or generated column, or in a partition key, an inherited or identity column, and a table whose row type a column has.  Here: %s.',
                                      array_to_string(v_blocked, '; ')),
                      HINT = 'Drop what uses those columns, run snowflake_migrate, and create it again, all in one transaction.  A column of a partition key, or an inherited one, cannot change its type this way: keep its key bigint.';
        END IF;

        -- the type refuses negative numbers
        FOR i IN 1 .. cardinality(v_wcols) LOOP
            SELECT a.attrelid::regclass AS rel, a.attname INTO v_narrow
              FROM pg_attribute a
             WHERE a.attrelid = split_part(v_wcols[i], ' ', 1)::oid
               AND a.attnum = split_part(v_wcols[i], ' ', 2)::smallint;
            v_read := snowflake.read_relation(v_narrow.rel, v_narrow.attname);
            IF (v_read ->> 'min')::bigint < 0 THEN
                v_blocked := v_blocked || format('%s.%I holds values down to %s',
                                                 v_narrow.rel, v_narrow.attname, v_read ->> 'min');
            END IF;
        END LOOP;
        IF cardinality(v_blocked) > 0 THEN
            RAISE EXCEPTION 'columns to change to type snowflake hold negative numbers'
                USING ERRCODE = 'numeric_value_out_of_range',
                      DETAIL = format('The type snowflake refuses negative numbers, and snowflake IDs are never negative: %s.',
                                      array_to_string(v_blocked, '; ')),
                      HINT = 'Renumber or remove those rows, or leave the columns bigint (without to_type).';
        END IF;
    END IF;

    -- Every existing value must lie below the IDs the generator will hand
    -- out.  first_id, drawn by the caller before this function started,
    -- bounds them all: IDs only increase on a server, so every later ID,
    -- the new default's included, is above it.  That it was drawn before
    -- the lock does not matter: max() is read below, after the lock, so it
    -- sees every value inserted before the default changes, including any
    -- inserted while we waited.
    --
    -- The locks are held already (except in a dry run), so that no insert
    -- slips in between reading max() and the sequence's position and the
    -- change; the first statement reports them.
    v_do := v_do || format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', array_to_string(v_tables, ', '));

    v_read := snowflake.read_relation(tbl, col);
    v_max := (v_read ->> 'max')::bigint;
    -- (A column that defaults to snowflake_nextval() already changes type
    -- only: its values are the generator's, or were checked when it moved.)
    IF NOT v_done AND v_max >= v_first_id THEN
        RAISE EXCEPTION 'column "%" of table "%" holds values up to %, at or above the next snowflake ID %',
            col, v_rel.relname, v_max, v_first_id
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Every ID this server hands out from now on is above %s, so an existing value at or above it could be issued again.', v_first_id),
                  HINT = 'Such values come from a sequence set far ahead or from another generator (another epoch or layout); renumber them before migrating.';
    END IF;

    IF v_att.attidentity IN ('a', 'd') THEN
        -- DROP IDENTITY drops the identity sequence: keep a plain copy of
        -- it under the same name, at the same position, for the undo.
        v_read := snowflake.read_relation(v_seq, NULL);
        v_last := (v_read ->> 'last_value')::bigint;
        v_called := (v_read ->> 'is_called')::boolean;
        SELECT format_type(s.seqtypid, NULL) AS typname, s.seqincrement, s.seqmin, s.seqmax,
               s.seqstart, s.seqcache, s.seqcycle, c.relpersistence
          INTO v_seqdef
          FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
         WHERE s.seqrelid = v_seq;
        v_seqopts := format('INCREMENT BY %s MINVALUE %s MAXVALUE %s START WITH %s CACHE %s %s',
                            v_seqdef.seqincrement, v_seqdef.seqmin, v_seqdef.seqmax,
                            v_seqdef.seqstart, v_seqdef.seqcache,
                            CASE WHEN v_seqdef.seqcycle THEN 'CYCLE' ELSE 'NO CYCLE' END);

        v_do := v_do || format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
        v_do := v_do || format('CREATE %sSEQUENCE %s AS %s %s',
                               CASE WHEN v_seqdef.relpersistence = 'u' THEN 'UNLOGGED ' ELSE '' END,
                               v_seqname, v_seqdef.typname, v_seqopts);
        v_do := v_do || format('SELECT pg_catalog.setval(%L, %s, %s)',
                               v_seqname, v_last, CASE WHEN v_called THEN 'true' ELSE 'false' END);
        v_do := v_do || format('COMMENT ON SEQUENCE %s IS %L', v_seqname, v_keptnote);
        IF v_rel.relowner <> v_me THEN
            v_do := v_do || format('ALTER SEQUENCE %s OWNER TO %I', v_seqname, pg_get_userbyid(v_rel.relowner));
        END IF;

        -- ADD GENERATED needs the column without a default and the name
        -- free; the sequence it creates takes the column's type, and the
        -- explicit bounds keep the old range.
        v_undo := v_undo || format('ALTER TABLE %s ALTER COLUMN %I DROP DEFAULT', tbl, col);
        v_undo := v_undo || format('DROP SEQUENCE %s', v_seqname);
        v_undo := v_undo || format('ALTER TABLE %s ALTER COLUMN %I ADD GENERATED %s AS IDENTITY (SEQUENCE NAME %s %s)',
                                   tbl, col,
                                   CASE v_att.attidentity WHEN 'a' THEN 'ALWAYS' ELSE 'BY DEFAULT' END,
                                   v_seqname, v_seqopts);
        v_undo := v_undo || format('SELECT pg_catalog.setval(%L, %s, %s)',
                                   v_seqname, v_last, CASE WHEN v_called THEN 'true' ELSE 'false' END);
        -- the identity sequence ADD GENERATED creates has no comment
        IF v_seqnote IS NOT NULL THEN
            v_undo := v_undo || format('COMMENT ON SEQUENCE %s IS %L', v_seqname, v_seqnote);
        END IF;
    ELSIF NOT v_done THEN
        v_undo := v_undo || format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s', tbl, col, v_default);
        IF v_owned THEN
            v_undo := v_undo || format('ALTER SEQUENCE %s OWNED BY %s.%I', v_seqname, tbl, col);
            -- its comment as it was (IS NULL removes ours)
            v_undo := v_undo || format('COMMENT ON SEQUENCE %s IS %L', v_seqname, v_seqnote);
        END IF;
    END IF;

    -- The type changes, one statement per table, before the new default:
    -- an identity is gone by then (an identity column must be an integer
    -- type).  Undone first, for the same reason: back to bigint, which is
    -- binary-coercible from the type, so no rewrite (and the cast the
    -- type change put around the default goes with it).
    v_widen_at := cardinality(v_do) + 1;
    IF widen OR to_type THEN
        FOR i IN 1 .. cardinality(v_rewritten) LOOP
            v_do := v_do || format('ALTER TABLE %s %s', v_rewritten[i], v_clauses[i]);
        END LOOP;
    END IF;
    IF to_type THEN
        v_undo := ARRAY(SELECT format('ALTER TABLE %s %s', t, b)
                          FROM unnest(v_rewritten, v_back) WITH ORDINALITY AS u (t, b, n)
                         ORDER BY n)
                  || v_undo;
    END IF;

    IF NOT v_done THEN
        v_do := v_do || format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s', tbl, col, v_newdef);
    END IF;
    IF v_owned THEN
        v_do := v_do || format('ALTER SEQUENCE %s OWNED BY NONE', v_seqname);
        v_do := v_do || format('COMMENT ON SEQUENCE %s IS %L', v_seqname, v_keptnote);
    END IF;

    IF NOT dry_run THEN
        v_role := current_setting('role');
        FOR i IN 2 .. cardinality(v_do) LOOP
            IF (widen OR to_type) AND i >= v_widen_at AND i < v_widen_at + cardinality(v_rewritten)
               AND v_owners[i - v_widen_at + 1] <> v_me THEN
                -- the rewrite checks the table's constraints and builds its
                -- indexes: as its owner, as core runs VACUUM or REINDEX
                PERFORM set_config('role', pg_get_userbyid(v_owners[i - v_widen_at + 1]), true);
                EXECUTE v_do[i];
                PERFORM set_config('role', v_role, true);
            ELSE
                EXECUTE v_do[i];
            END IF;
        END LOOP;

        -- What the statements did, by OID: they named everything by name.
        IF NOT snowflake.default_calls(tbl, v_att.attnum, v_nextval, id_type) THEN
            v_wrong := v_wrong || format('column %I of table %s does not default to the extension''s %s',
                                         col, tbl, v_nextval);
        END IF;
        IF widen OR to_type THEN
            v_wrong := v_wrong || ARRAY(
                SELECT format('column %I of table %s is %s, not %s', a.attname, a.attrelid::regclass,
                              format_type(a.atttypid, a.atttypmod),
                              CASE WHEN to_type THEN format('the extension''s %s', id_type)
                                   ELSE 'bigint' END)
                  FROM unnest(v_wcols) AS u (c)
                  JOIN pg_attribute a ON a.attrelid = split_part(u.c, ' ', 1)::oid
                                     AND a.attnum = split_part(u.c, ' ', 2)::smallint
                 WHERE a.atttypid <> CASE WHEN to_type THEN id_type ELSE 'int8'::regtype END);
        END IF;
        IF v_att.attidentity IN ('a', 'd') THEN
            IF NOT EXISTS (SELECT FROM pg_class s
                            WHERE s.relnamespace = v_seqnsp.oid AND s.relkind = 'S'
                              AND s.oid::regclass::text = v_seqname) THEN
                v_wrong := v_wrong || format('no sequence %s was created in schema %s for the undo',
                                             v_seqname, v_seqnsp.oid::regnamespace);
            END IF;
        END IF;
        IF v_owned AND EXISTS (SELECT FROM pg_depend d
                                WHERE d.classid = 'pg_class'::regclass AND d.objid = v_seq
                                  AND d.refclassid = 'pg_class'::regclass AND d.refobjid = tbl
                                  AND d.deptype = 'a') THEN
            v_wrong := v_wrong || format('sequence %s is still owned by column %I', v_seq::regclass, col);
        END IF;
        IF cardinality(v_wrong) > 0 THEN
            RAISE EXCEPTION 'a schema or relation was renamed while snowflake_migrate ran'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = format('Its statements name tables, sequences, functions and types by schema-qualified name, and one of those names meant something else by then: %s.  The changes are rolled back.',
                                      array_to_string(v_wrong, '; ')),
                      HINT = 'Check the names of the table, its schema and the extension''s schema, and run snowflake_migrate again.';
        END IF;
    END IF;

    IF to_type AND cardinality(v_rewritten) > 0 THEN
        RAISE NOTICE '%',
            format('%s %s to type snowflake%s %s with %s indexes under ACCESS EXCLUSIVE locks',
                   CASE WHEN dry_run THEN 'changing' ELSE 'changed' END,
                   array_to_string(v_widen, ', '),
                   CASE WHEN dry_run THEN ' would rewrite' ELSE ', rewriting' END,
                   array_to_string(v_rewritten, ', '),
                   CASE WHEN cardinality(v_rewritten) = 1 THEN 'its' ELSE 'their' END)
            USING DETAIL = 'Each rewrite copies the table and rebuilds its indexes (the cast from bigint checks every value, so even a bigint column is rewritten), and each foreign key on a changed column is checked again; the locks block reads and writes until the transaction ends.  The undo script changes these columns back to bigint without a rewrite.';
    ELSIF widen AND cardinality(v_rewritten) > 0 THEN
        RAISE NOTICE '%',
            format('%s %s to bigint%s %s with %s indexes under ACCESS EXCLUSIVE locks',
                   CASE WHEN dry_run THEN 'widening' ELSE 'widened' END,
                   array_to_string(v_widen, ', '),
                   CASE WHEN dry_run THEN ' would rewrite' ELSE ', rewriting' END,
                   array_to_string(v_rewritten, ', '),
                   CASE WHEN cardinality(v_rewritten) = 1 THEN 'its' ELSE 'their' END)
            USING DETAIL = 'Each rewrite copies the table and rebuilds its indexes, and each foreign key on a widened column is checked again; the locks block reads and writes until the transaction ends.  The undo script leaves these columns bigint.';
    END IF;

    IF NOT dry_run AND NOT v_done THEN
        IF v_owned OR v_att.attidentity IN ('a', 'd') THEN
            RAISE NOTICE 'column "%" of table "%" now defaults to snowflake_nextval(); sequence % is kept, detached, for the undo script',
                col, v_rel.relname, v_seqname
                USING DETAIL = 'Drop the sequence once you no longer need to undo the migration.';
        ELSE
            RAISE NOTICE 'column "%" of table "%" now defaults to snowflake_nextval(); sequence % was not owned by the column and is left as it was',
                col, v_rel.relname, v_seqname;
        END IF;
    END IF;

    RETURN QUERY
        SELECT 'do'::text, u.n::integer, u.s FROM unnest(v_do) WITH ORDINALITY AS u (s, n)
        UNION ALL
        SELECT 'undo'::text, u.n::integer, u.s FROM unnest(v_undo) WITH ORDINALITY AS u (s, n);
END
$function$;

COMMENT ON FUNCTION snowflake.migrate(regclass, name, boolean, boolean, boolean, bigint, regprocedure, regtype) IS
'Internal: the body of snowflake_migrate(), given an ID drawn for it';

-- snowflake.migrate() must know an ID that every ID issued later is
-- above.  It cannot call snowflake_nextval() by name, so this function
-- draws one, with a call bound when it was created, and passes it on.
-- Drawing it before snowflake.migrate() takes its locks is as good as
-- drawing it under them: see there.  It passes on the function and the
-- type snowflake too, as constants read when it was created (a regtype
-- or regprocedure constant is an OID, with a dependency): a member of the
-- extension found by its name would not do, since the extension's owner
-- may add objects of its own to the extension.
CREATE FUNCTION snowflake_migrate(tbl regclass,
                                  col name DEFAULT 'id',
                                  dry_run boolean DEFAULT false,
                                  widen boolean DEFAULT false,
                                  to_type boolean DEFAULT false)
RETURNS TABLE (kind text, step integer, statement text)
LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT m.kind, m.step, m.statement
      FROM snowflake.migrate(tbl, col, dry_run, widen, to_type,
                             @extschema@.snowflake_nextval(),
                             '@extschema@.snowflake_nextval()'::regprocedure,
                             '@extschema@.snowflake'::regtype) AS m;
END;

COMMENT ON FUNCTION snowflake_migrate(regclass, name, boolean, boolean, boolean) IS
'Moves a serial or identity column onto snowflake_nextval(), optionally to the type; returns the undo';

--
-- The worker-id registry
--
-- Two servers with the same worker id mint the same IDs.  The registry
-- records which database system (pg_control_system().system_identifier)
-- holds each worker id.  The guard trigger refuses a second system for a
-- worker id on every insert: a local registration, a manual INSERT, and rows
-- applied by logical replication (it is ENABLE ALWAYS), so when two servers
-- register the same worker id on different nodes at the same time, the
-- conflict stops the subscription with the guard's error.  A row that is
-- already there is skipped silently, which keeps a mesh of publications
-- from looping.  docs/fleet.md describes the topologies.
--
-- The table, its trigger function and the functions that do the work of
-- snowflake_check_worker() and snowflake_register_worker() live in the
-- schema snowflake (see above).

CREATE TABLE snowflake.workers (
    worker_id integer PRIMARY KEY CHECK (worker_id >= 0),
    system_identifier bigint NOT NULL,
    host text,
    first_seen timestamptz NOT NULL DEFAULT now(),
    holder bytea,
    lease_expires timestamptz,
    ceiling bigint,
    fence bigint,
    layout text,
    held_since timestamptz,
    renewed timestamptz,
    CONSTRAINT workers_worker_system_key UNIQUE (worker_id, system_identifier)
);

-- Logical replication identifies rows by worker id AND system, so that
-- deleting one server's row never deletes another server's row elsewhere.
ALTER TABLE snowflake.workers
    REPLICA IDENTITY USING INDEX workers_worker_system_key;

COMMENT ON TABLE snowflake.workers IS
'Which database system holds each worker id: replicate it to catch a worker id used twice';
COMMENT ON COLUMN snowflake.workers.worker_id IS
'The snowflake.worker_id of the registered server';
COMMENT ON COLUMN snowflake.workers.system_identifier IS
'The registered server''s pg_control_system().system_identifier';
COMMENT ON COLUMN snowflake.workers.host IS
'A label for the registered server, for people reading errors';
COMMENT ON COLUMN snowflake.workers.first_seen IS
'When the worker id was registered';
COMMENT ON COLUMN snowflake.workers.holder IS
'Leases: SHA-256 of the holder''s secret token; NULL for a worker id registered by hand';
COMMENT ON COLUMN snowflake.workers.lease_expires IS
'Leases: when other servers may take the worker id (the registry''s clock)';
COMMENT ON COLUMN snowflake.workers.ceiling IS
'Leases: no holder of the worker id has issued an ID above this one';
COMMENT ON COLUMN snowflake.workers.fence IS
'Leases: the ceiling when the current holder claimed it; it issues only IDs above';
COMMENT ON COLUMN snowflake.workers.layout IS
'Leases: the layout and epoch the ceiling is written in';
COMMENT ON COLUMN snowflake.workers.held_since IS
'Leases: when the current holder claimed the worker id';
COMMENT ON COLUMN snowflake.workers.renewed IS
'Leases: when the current holder last renewed its lease';

-- pg_dump keeps the rows (the table itself comes with CREATE EXTENSION).
SELECT pg_catalog.pg_extension_config_dump('snowflake.workers', '');

GRANT SELECT ON snowflake.workers TO PUBLIC;

-- The role that created the extension registers servers and retires their
-- rows.  A no-op for a superuser, who owns the table; a database owner who
-- creates the (trusted) extension does not own it: the bootstrap superuser
-- runs this script for them and owns what it creates.
GRANT INSERT, UPDATE, DELETE ON snowflake.workers TO @extowner@;

CREATE FUNCTION snowflake.workers_guard()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    held snowflake.workers;
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.ceiling IS NOT NULL THEN
            RAISE EXCEPTION 'the registry row of snowflake worker id % records a lease''s ceiling', OLD.worker_id
                USING ERRCODE = 'object_in_use',
                      DETAIL = 'The next server that takes this worker id must issue IDs above every ID its earlier holders issued, and only this row records them.',
                      HINT = 'Rows of leases are never deleted; a worker id whose lease lapsed is taken again by the next server that needs one.  A whole fleet moving to a new layout starts an empty registry (TRUNCATE snowflake.workers).',
                      SCHEMA = TG_TABLE_SCHEMA,
                      TABLE = TG_TABLE_NAME;
        END IF;
        RETURN OLD;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        IF NEW.worker_id = OLD.worker_id
           AND NEW.system_identifier = OLD.system_identifier THEN
            RETURN NEW;
        END IF;
        IF NEW.worker_id = OLD.worker_id THEN
            -- the row being changed is the one that holds the worker id;
            -- a lease that lapsed may pass to another system
            IF OLD.holder IS NOT NULL AND OLD.lease_expires <= now() THEN
                RETURN NEW;
            END IF;
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

COMMENT ON FUNCTION snowflake.workers_guard() IS
'Trigger: refuses to give a worker id to a second database system, also in replication';

-- ENABLE ALWAYS: the guard fires in logical replication apply workers too.
CREATE TRIGGER workers_guard
    BEFORE INSERT OR UPDATE OF worker_id, system_identifier OR DELETE
    ON snowflake.workers
    FOR EACH ROW EXECUTE FUNCTION snowflake.workers_guard();

ALTER TABLE snowflake.workers
    ENABLE ALWAYS TRIGGER workers_guard;

-- The registry's functions: snowflake_worker_identity() reads this
-- server's identity; the work of snowflake_check_worker() and
-- snowflake_register_worker() is done by snowflake.check_worker() and
-- snowflake.register_worker(), which are given that identity.  The public
-- three are SQL-standard functions, bound to what they call when created.

CREATE FUNCTION @extschema@.snowflake_worker_identity(
    OUT worker_id integer,
    OUT system_identifier bigint,
    OUT host text)
RETURNS record
LANGUAGE sql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT s.worker_id,
           c.system_identifier,
           coalesce(pg_catalog.host(pg_catalog.inet_server_addr()),
                    nullif(pg_catalog.current_setting('cluster_name'::text), ''::text))
      FROM @extschema@.snowflake_stats() s,
           pg_catalog.pg_control_system() c;
END;

COMMENT ON FUNCTION @extschema@.snowflake_worker_identity() IS
'This server''s registry row: worker id, system identifier and host';

CREATE FUNCTION snowflake.check_worker(worker_id integer, system_identifier bigint)
RETURNS boolean
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    held snowflake.workers;
BEGIN
    IF check_worker.worker_id IS NULL THEN
        RAISE EXCEPTION 'snowflake.worker_id is not set'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Set snowflake.worker_id in postgresql.conf to a number that no other server uses, and restart the server.';
    END IF;
    SELECT * INTO held
      FROM snowflake.workers w
     WHERE w.worker_id = check_worker.worker_id;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF held.system_identifier <> check_worker.system_identifier THEN
        RAISE EXCEPTION 'snowflake worker id % is registered to another server',
                        check_worker.worker_id
            USING ERRCODE = 'unique_violation',
                  DETAIL = format('The registry gives worker id %s to database system %s (%s) since %s; this server is database system %s.',
                                  held.worker_id, held.system_identifier,
                                  coalesce('host "' || held.host || '"', 'no host recorded'),
                                  held.first_seen, check_worker.system_identifier),
                  HINT = 'Two servers with the same worker id generate the same IDs.  Stop generating IDs here, give this server another snowflake.worker_id and restart it.';
    END IF;
    RETURN true;
END
$$;

COMMENT ON FUNCTION snowflake.check_worker(integer, bigint) IS
'Internal: snowflake_check_worker() for the given worker id and system identifier';

CREATE FUNCTION @extschema@.snowflake_check_worker()
RETURNS boolean
LANGUAGE sql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT snowflake.check_worker(i.worker_id, i.system_identifier)
      FROM @extschema@.snowflake_worker_identity() i;
END;

COMMENT ON FUNCTION @extschema@.snowflake_check_worker() IS
'True if the registry gives this worker id to this server; an error if another holds it';

CREATE FUNCTION snowflake.register_worker(worker_id integer, system_identifier bigint, host text)
RETURNS snowflake.workers
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
-- (so that worker_id in ON CONFLICT is the column; parameters are qualified)
DECLARE
    registered snowflake.workers;
BEGIN
    IF register_worker.worker_id IS NULL THEN
        RAISE EXCEPTION 'snowflake.worker_id is not set'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Set snowflake.worker_id in postgresql.conf to a number that no other server uses, and restart the server.';
    END IF;
    -- the guard trigger refuses a worker id held by another system
    INSERT INTO snowflake.workers (worker_id, system_identifier, host)
    VALUES (register_worker.worker_id, register_worker.system_identifier, register_worker.host)
    ON CONFLICT (worker_id) DO NOTHING;
    -- a concurrent registration may have won the race
    PERFORM snowflake.check_worker(register_worker.worker_id, register_worker.system_identifier);
    SELECT * INTO registered
      FROM snowflake.workers w
     WHERE w.worker_id = register_worker.worker_id;
    RETURN registered;
END
$$;

COMMENT ON FUNCTION snowflake.register_worker(integer, bigint, text) IS
'Internal: snowflake_register_worker() for the given worker id, system identifier and host';

CREATE FUNCTION @extschema@.snowflake_register_worker(host text DEFAULT NULL)
RETURNS snowflake.workers
LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT r.*
      FROM @extschema@.snowflake_worker_identity() i,
           snowflake.register_worker(i.worker_id, i.system_identifier,
                                     coalesce(snowflake_register_worker.host, i.host)) r;
END;

COMMENT ON FUNCTION @extschema@.snowflake_register_worker(text) IS
'Registers this server''s worker id in snowflake.workers; an error if another holds it';

--
-- Worker-id leases
--
-- A server configured with snowflake.registry takes its worker id from the
-- registry database by itself, through the three functions below, which
-- its lease keeper (src/lease.c) calls over libpq.  The lease decides who
-- may take a worker id; the ceiling guarantees that no two holders of one
-- worker id, ever, issue the same ID:
--
--   * ceiling is an ID.  Before a holder issues an ID under a worker id, a
--     transaction of lease_renew() that raised that row's ceiling to at
--     least that ID has committed while the row still held the holder's
--     token.  The ceiling only ever goes up, except at lease_release()
--     (below).
--   * lease_claim() gives a worker id to a new holder (a new token) and
--     returns the row's ceiling as the fence: the new holder issues only
--     IDs above it.
--   * After a claim, the earlier holder's renewals find another token and
--     change nothing, so every ID it ever issued lies at or below a ceiling
--     that committed before the claim: at or below the fence.  Hence any two
--     holders of one worker id issue disjoint IDs, whatever their clocks,
--     whether or not the earlier one still runs, and however the lease
--     expired or was taken.  Row locks order a claim and a renewal of the
--     same row; claims also lock the table against each other.
--   * lease_release() lowers the ceiling to the largest ID its holder
--     issued (it has stopped issuing by then), but never below the fence it
--     claimed at, which covers every earlier holder: still at or above every
--     ID issued under that worker id, so the argument holds, and the next
--     holder starts right above the last real ID rather than a lease's
--     length ahead.
--
-- Expiry uses the registry's clock only, and only decides when another
-- server may take a worker id without proof that it is the holder.  A
-- server proves that with the token of the holder it follows (its own
-- before a crash, or its primary's, replicated to standbys in WAL): it may
-- then take the lease before it expires, fenced like any claim.  Tokens are
-- secrets; the table keeps only their SHA-256 digests, so reading the
-- registry lets no one act as a holder.
--
-- The functions are SECURITY DEFINER so that the role servers use can
-- claim, renew and release leases without any privilege on the table.
-- They are owned by the superuser who ran this script, are PL/pgSQL with
-- their search path set to pg_catalog then pg_temp (which is never
-- searched for functions or operators), so that every name and operator
-- in them is looked up there when they run, name every other object with
-- its schema, which is this superuser-owned schema, and run no dynamic
-- SQL.  (A BEGIN ATOMIC body would resolve its operators while this
-- script runs, with the extension's schema on the path, where the role
-- creating the extension could have planted a closer match.)  They wait
-- at most 5 s for a lock (lock_timeout), so that a stalled caller costs the
-- others a failed attempt, which their keepers retry, not a queue.
--

-- The holder's token as the table keeps it.
CREATE FUNCTION snowflake.lease_digest(token uuid)
RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
    SELECT pg_catalog.sha256(pg_catalog.uuid_send(token));
END;

COMMENT ON FUNCTION snowflake.lease_digest(uuid) IS
'Leases: the SHA-256 of a holder''s token, as snowflake.workers keeps it';

CREATE FUNCTION snowflake.lease_claim(system_identifier bigint,
                                      host text,
                                      layout text,
                                      worker_bits integer,
                                      lease_ms integer,
                                      token uuid,
                                      prefer integer,
                                      proof uuid,
                                      configured boolean,
                                      OUT worker_id integer,
                                      OUT fence bigint,
                                      OUT lease_expires timestamptz)
RETURNS record
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '5s'
AS $$
-- Gives a worker id to the holder of "token": "prefer" if it is free, its
-- lease lapsed, it is registered by hand to this system, or "proof" is the
-- token of its current holder on this system; otherwise (unless
-- "configured", which allows only "prefer") a worker id no one ever held,
-- else the lapsed lease with the lowest ceiling.  Returns the worker id,
-- the fence (the ceiling so far: the holder issues only IDs above it; -1 if
-- none) and when the lease lapses unless renewed.
DECLARE
    v_max       integer;
    v_digest    bytea;
    v_proof     bytea;
    v_row       snowflake.workers;
    v_id        integer;
    v_other     snowflake.workers;
BEGIN
    IF system_identifier IS NULL OR layout IS NULL OR worker_bits IS NULL
       OR lease_ms IS NULL OR token IS NULL OR configured IS NULL THEN
        RAISE EXCEPTION 'arguments of snowflake.lease_claim must not be null, except prefer and proof'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF worker_bits NOT BETWEEN 0 AND 20 THEN
        RAISE EXCEPTION 'worker_bits % is out of range', worker_bits
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'snowflake.worker_bits goes from 0 to 20.';
    END IF;
    IF lease_ms NOT BETWEEN 1000 AND 86400000 THEN
        RAISE EXCEPTION 'lease time % ms is out of range', lease_ms
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'A lease lasts from 1 second to 1 day.';
    END IF;
    v_max := (1 << worker_bits) - 1;
    IF prefer IS NOT NULL AND prefer NOT BETWEEN 0 AND v_max THEN
        IF configured THEN
            RAISE EXCEPTION 'worker id % does not fit in % worker bits', prefer, worker_bits
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        prefer := NULL;
    END IF;
    v_digest := snowflake.lease_digest(token);
    v_proof := snowflake.lease_digest(proof);

    -- Claims wait for each other (the mode conflicts with itself, so no two
    -- pick the same free worker id), but not for renewals and releases,
    -- which update rows: a claim that stalls, or a role that sits in one,
    -- keeps new servers from claiming, never running servers from renewing
    -- (except the one row a claim takes, which it locks below).
    LOCK TABLE snowflake.workers IN SHARE UPDATE EXCLUSIVE MODE;

    -- Ceilings are IDs: one layout and epoch for the whole fleet.
    SELECT * INTO v_other FROM snowflake.workers w
     WHERE w.layout IS NOT NULL AND w.layout <> lease_claim.layout
     ORDER BY w.worker_id LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'this server''s snowflake layout differs from the layout of the fleet in the registry'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Worker id %s was leased under %s; this server uses %s.',
                                  v_other.worker_id, v_other.layout, lease_claim.layout),
                  HINT = 'Servers that share a registry must have the same snowflake.epoch, snowflake.id_bits, snowflake.worker_bits and snowflake.sequence_bits: ceilings are IDs, which mean nothing under another layout.';
    END IF;

    IF prefer IS NOT NULL THEN
        -- locked, so that a renewal cannot slip in between the check and
        -- the claim (a claim waits for one in progress, then sees its row)
        SELECT * INTO v_row FROM snowflake.workers w WHERE w.worker_id = prefer
           FOR UPDATE;
        IF NOT FOUND
           OR (v_row.holder IS NULL
               AND v_row.system_identifier = lease_claim.system_identifier)
           OR (v_row.holder IS NOT NULL
               AND (v_row.lease_expires <= now()
                    OR v_row.holder = v_digest
                    OR (v_row.holder = v_proof
                        AND v_row.system_identifier = lease_claim.system_identifier))) THEN
            v_id := prefer;
        ELSIF configured THEN
            RAISE EXCEPTION 'snowflake worker id % is held by another server', prefer
                USING ERRCODE = 'object_in_use',
                      DETAIL = CASE WHEN v_row.holder IS NULL
                               THEN format('Worker id %s is registered by hand to database system %s (%s) since %s.',
                                           prefer, v_row.system_identifier,
                                           coalesce('host "' || v_row.host || '"', 'no host recorded'),
                                           v_row.first_seen)
                               ELSE format('Worker id %s is leased by database system %s (%s) until %s.',
                                           prefer, v_row.system_identifier,
                                           coalesce('host "' || v_row.host || '"', 'no host recorded'),
                                           v_row.lease_expires)
                               END,
                      HINT = 'Two servers with the same worker id would issue the same IDs, so this one generates none.  Give it another snowflake.worker_id, or leave snowflake.worker_id unset so that the registry assigns one.';
        END IF;
    END IF;

    IF v_id IS NULL THEN
        -- a worker id no one has held starts at the clock
        SELECT g INTO v_id
          FROM pg_catalog.generate_series(0, v_max) AS g
         WHERE NOT EXISTS (SELECT FROM snowflake.workers w WHERE w.worker_id = g)
         ORDER BY g LIMIT 1;
    END IF;
    IF v_id IS NULL THEN
        -- a lapsed lease, the one whose ceiling is lowest
        -- (a row being renewed right now is not lapsed: skip it)
        SELECT w.worker_id INTO v_id
          FROM snowflake.workers w
         WHERE w.worker_id <= v_max AND w.holder IS NOT NULL
           AND w.lease_expires <= now()
         ORDER BY w.ceiling NULLS FIRST, w.worker_id
         LIMIT 1
           FOR UPDATE SKIP LOCKED;
    END IF;
    IF v_id IS NULL THEN
        RAISE EXCEPTION 'every snowflake worker id is held'
            USING ERRCODE = 'configuration_limit_exceeded',
                  DETAIL = format('All %s worker ids of %s worker bits are leased by running servers or registered by hand; the first lease lapses at %s.',
                                  v_max + 1, worker_bits,
                                  (SELECT min(w.lease_expires) FROM snowflake.workers w
                                    WHERE w.worker_id <= v_max AND w.holder IS NOT NULL)),
                  HINT = 'Servers that stopped cleanly free their worker ids at once, others when their lease lapses (snowflake.lease_time).  A fleet this large needs more snowflake.worker_bits, which is a new layout.';
    END IF;

    UPDATE snowflake.workers w
       SET system_identifier = lease_claim.system_identifier,
           host = lease_claim.host,
           holder = v_digest,
           lease_expires = now() + lease_ms * interval '1 millisecond',
           fence = w.ceiling,
           layout = lease_claim.layout,
           held_since = now(),
           renewed = now()
     WHERE w.worker_id = v_id
    RETURNING w.worker_id, coalesce(w.fence, -1), w.lease_expires
         INTO lease_claim.worker_id, lease_claim.fence, lease_claim.lease_expires;
    IF NOT FOUND THEN
        INSERT INTO snowflake.workers AS w
               (worker_id, system_identifier, host, holder, lease_expires,
                layout, held_since, renewed)
        VALUES (v_id, lease_claim.system_identifier, lease_claim.host, v_digest,
                now() + lease_ms * interval '1 millisecond',
                lease_claim.layout, now(), now())
        RETURNING w.worker_id, -1, w.lease_expires
             INTO lease_claim.worker_id, lease_claim.fence, lease_claim.lease_expires;
    END IF;
END
$$;

COMMENT ON FUNCTION snowflake.lease_claim(bigint, text, text, integer, integer, uuid, integer, uuid, boolean) IS
'Leases: gives a worker id to a server; returns it with the fence its IDs must stay above';

CREATE FUNCTION snowflake.lease_renew(worker_id integer,
                                      token uuid,
                                      wanted bigint,
                                      lease_ms integer,
                                      OUT ceiling bigint,
                                      OUT lease_expires timestamptz)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '5s'
AS $$
-- Raises the ceiling of the holder of "token" to at least "wanted" and
-- extends its lease by lease_ms; returns the row's ceiling and expiry, or
-- no row if the token no longer holds the worker id.
BEGIN
    UPDATE snowflake.workers w
       SET ceiling = greatest(w.ceiling, lease_renew.wanted),
           lease_expires = now() + least(greatest(lease_renew.lease_ms, 1000), 86400000)
                                   * interval '1 millisecond',
           renewed = now()
     WHERE w.worker_id = lease_renew.worker_id
       AND w.holder = snowflake.lease_digest(lease_renew.token)
    RETURNING w.ceiling, w.lease_expires
         INTO lease_renew.ceiling, lease_renew.lease_expires;
    IF FOUND THEN
        RETURN NEXT;
    END IF;
END
$$;

COMMENT ON FUNCTION snowflake.lease_renew(integer, uuid, bigint, integer) IS
'Leases: raises the holder''s ceiling and extends its lease; no row if it no longer holds it';

CREATE FUNCTION snowflake.lease_release(worker_id integer,
                                        token uuid,
                                        last_id bigint)
RETURNS boolean
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '5s'
AS $$
-- Ends the lease of the holder of "token" now, and lowers the ceiling to
-- last_id, the last ID it issued (it has stopped issuing), but never below
-- the fence it claimed at, which covers every earlier holder.  False if
-- the token no longer holds the worker id.
BEGIN
    UPDATE snowflake.workers w
       SET lease_expires = now(),
           ceiling = greatest(w.fence, least(w.ceiling, lease_release.last_id)),
           renewed = now()
     WHERE w.worker_id = lease_release.worker_id
       AND w.holder = snowflake.lease_digest(lease_release.token);
    RETURN FOUND;
END
$$;

COMMENT ON FUNCTION snowflake.lease_release(integer, uuid, bigint) IS
'Leases: frees the holder''s worker id; its ceiling falls to the last ID it issued';

-- Leases are taken through these functions only.  The role that created
-- the extension may grant them to the role the fleet's servers log in as:
--   GRANT EXECUTE ON FUNCTION snowflake.lease_claim, snowflake.lease_renew,
--       snowflake.lease_release TO fleet;
REVOKE ALL ON FUNCTION
    snowflake.lease_claim(bigint, text, text, integer, integer, uuid, integer, uuid, boolean),
    snowflake.lease_renew(integer, uuid, bigint, integer),
    snowflake.lease_release(integer, uuid, bigint)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    snowflake.lease_claim(bigint, text, text, integer, integer, uuid, integer, uuid, boolean),
    snowflake.lease_renew(integer, uuid, bigint, integer),
    snowflake.lease_release(integer, uuid, bigint)
    TO @extowner@ WITH GRANT OPTION;
