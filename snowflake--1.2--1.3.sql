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

-- snowflake_migrate puts a COMMENT on the sequence it keeps for the undo,
-- and its undo script restores the comment the sequence had.

CREATE OR REPLACE FUNCTION snowflake_migrate(tbl regclass,
                                  col name DEFAULT 'id',
                                  dry_run boolean DEFAULT false,
                                  widen boolean DEFAULT false)
RETURNS TABLE (kind text, step integer, statement text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
-- Moves one column off a sequence default (serial, bigserial, or any
-- DEFAULT nextval('seq')) or an identity onto DEFAULT snowflake_nextval().
-- Returns the statements it ran (kind 'do') and the statements that undo
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
-- from the catalog, and the tables to widen are locked before their
-- foreign-key graph is trusted: a migration or an ALTER TABLE that held a
-- lock we waited for has ended by then, and in READ COMMITTED every
-- statement here sees what it committed.
DECLARE
    v_nextval   regprocedure := '@extschema@.snowflake_nextval()'::regprocedure;
    v_newdef    text;       -- the new default, schema-qualified
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
    v_narrow    record;     -- a column to widen
    v_widen     text[];     -- "table.column (type)" for messages
    v_tables    regclass[]; -- tables to lock: tbl, then widened ones
    v_locked    regclass[] := '{}'; -- tables locked so far
    v_rewritten regclass[]; -- tables with columns to widen
    v_clauses   text[];     -- widening: ALTER COLUMN clauses, per table
                            -- in v_rewritten
    v_first_id  bigint;
    v_max       bigint;
    v_do        text[] := '{}';
    v_undo      text[] := '{}';
    i           integer;
BEGIN
    IF tbl IS NULL OR col IS NULL OR dry_run IS NULL OR widen IS NULL THEN
        RAISE EXCEPTION 'arguments of snowflake_migrate must not be null'
            USING ERRCODE = 'null_value_not_allowed',
                  DETAIL = 'A null table usually comes from to_regclass() on a name that does not exist.',
                  HINT = 'Pass the table, the column name, and true or false for dry_run and widen.';
    END IF;

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

    -- Already done: the default calls our function (a catalog dependency)
    -- and is nothing but that call.
    IF v_attrdef IS NOT NULL
       AND v_default IN (v_newdef, format('%I()', 'snowflake_nextval'))
       AND EXISTS (SELECT FROM pg_depend d
                    WHERE d.classid = 'pg_attrdef'::regclass AND d.objid = v_attrdef
                      AND d.refclassid = 'pg_proc'::regclass AND d.refobjid = v_nextval) THEN
        RAISE NOTICE 'column "%" of table "%" already defaults to snowflake_nextval(), nothing to do',
            col, v_rel.relname;
        RETURN;
    END IF;

    IF v_att.attgenerated <> '' THEN
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

    IF v_att.atttypid NOT IN ('int8'::regtype, 'int4'::regtype, 'int2'::regtype) THEN
        RAISE EXCEPTION 'column "%" of table "%" is of type %, not bigint', col, v_rel.relname, v_att.typname
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = 'Snowflake IDs are bigint values.';
    END IF;

    -- Columns too narrow for snowflake IDs: this one, and every column
    -- that references it through foreign keys, directly or in a chain
    -- (only the referencing column that maps to ours in a multi-column
    -- key).  Top-level constraints only: ALTER TABLE on a partitioned
    -- table reaches its partitions.  Outside a dry run, when widening,
    -- lock the tables found and look again, until no new one turns up: a
    -- foreign key added to one of them while we waited for its lock is
    -- then in the graph.
    LOOP
        v_widen := '{}';
        v_tables := ARRAY[tbl];
        v_rewritten := '{}';
        v_clauses := '{}';
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
            SELECT r.relid::regclass AS rel, a.attname, format_type(a.atttypid, a.atttypmod) AS typname,
                   c.relname, c.relowner
              FROM refs r
              JOIN pg_attribute a ON a.attrelid = r.relid AND a.attnum = r.attnum
              JOIN pg_class c ON c.oid = r.relid
             WHERE a.atttypid IN ('int2'::regtype, 'int4'::regtype)
             ORDER BY r.relid <> tbl, r.relid::regclass::text COLLATE "C", a.attname COLLATE "C"
        LOOP
            v_widen := v_widen || format('%s.%I (%s)', v_narrow.rel, v_narrow.attname, v_narrow.typname);
            IF NOT v_narrow.rel = ANY (v_tables) THEN
                v_tables := v_tables || v_narrow.rel;
            END IF;
            IF NOT v_narrow.rel = ANY (v_rewritten) THEN
                v_rewritten := v_rewritten || v_narrow.rel;
                v_clauses := v_clauses || format('ALTER COLUMN %I TYPE bigint', v_narrow.attname);
            ELSE
                i := array_position(v_rewritten, v_narrow.rel);
                v_clauses[i] := v_clauses[i] || format(', ALTER COLUMN %I TYPE bigint', v_narrow.attname);
            END IF;
            IF widen AND NOT pg_has_role(v_narrow.relowner, 'USAGE') THEN
                RAISE EXCEPTION 'must be owner of table %', v_narrow.relname
                    USING ERRCODE = 'insufficient_privilege',
                          DETAIL = format('Widening changes column %I of table %s, which references %s.%I, and only its owner may alter it.',
                                          v_narrow.attname, v_narrow.rel, tbl, col);
            END IF;
        END LOOP;
        EXIT WHEN dry_run OR NOT widen OR v_tables <@ v_locked;
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

    IF cardinality(v_widen) > 0 AND NOT widen THEN
        RAISE EXCEPTION '%',
            CASE WHEN v_att.atttypid <> 'int8'::regtype
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

    -- The generator must work here (preloaded, worker id set), and every
    -- existing value must lie below the IDs it will hand out.  IDs only
    -- increase on a server, so drawing one ID now gives a bound for all
    -- later ones; it costs one ID and also refuses in the same way the
    -- new default would.
    v_first_id := @extschema@.snowflake_nextval();

    -- The locks are held already (except in a dry run), so that no insert
    -- slips in between reading max() and the sequence's position and the
    -- change; the first statement reports them.
    v_do := v_do || format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', array_to_string(v_tables, ', '));

    EXECUTE format('SELECT max(%I)::bigint FROM %s', col, tbl) INTO v_max;
    IF v_max >= v_first_id THEN
        RAISE EXCEPTION 'column "%" of table "%" holds values up to %, at or above the next snowflake ID %',
            col, v_rel.relname, v_max, v_first_id
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Every ID this server hands out from now on is above %s, so an existing value at or above it could be issued again.', v_first_id),
                  HINT = 'Such values come from a sequence set far ahead or from another generator (another epoch or layout); renumber them before migrating.';
    END IF;

    IF v_att.attidentity IN ('a', 'd') THEN
        -- DROP IDENTITY drops the identity sequence: keep a plain copy of
        -- it under the same name, at the same position, for the undo.
        EXECUTE format('SELECT last_value, is_called FROM %s', v_seqname) INTO v_last, v_called;
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
        IF v_rel.relowner <> (SELECT oid FROM pg_roles WHERE rolname = current_user) THEN
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
    ELSE
        v_undo := v_undo || format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s', tbl, col, v_default);
        IF v_owned THEN
            v_undo := v_undo || format('ALTER SEQUENCE %s OWNED BY %s.%I', v_seqname, tbl, col);
            -- its comment as it was (IS NULL removes ours)
            v_undo := v_undo || format('COMMENT ON SEQUENCE %s IS %L', v_seqname, v_seqnote);
        END IF;
    END IF;

    IF widen THEN
        FOR i IN 1 .. cardinality(v_rewritten) LOOP
            v_do := v_do || format('ALTER TABLE %s %s', v_rewritten[i], v_clauses[i]);
        END LOOP;
    END IF;

    v_do := v_do || format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s', tbl, col, v_newdef);
    IF v_owned THEN
        v_do := v_do || format('ALTER SEQUENCE %s OWNED BY NONE', v_seqname);
        v_do := v_do || format('COMMENT ON SEQUENCE %s IS %L', v_seqname, v_keptnote);
    END IF;

    IF NOT dry_run THEN
        FOR i IN 2 .. cardinality(v_do) LOOP
            EXECUTE v_do[i];
        END LOOP;
    END IF;

    IF widen AND cardinality(v_rewritten) > 0 THEN
        RAISE NOTICE '%',
            format('%s %s to bigint%s %s with %s indexes under ACCESS EXCLUSIVE locks',
                   CASE WHEN dry_run THEN 'widening' ELSE 'widened' END,
                   array_to_string(v_widen, ', '),
                   CASE WHEN dry_run THEN ' would rewrite' ELSE ', rewriting' END,
                   array_to_string(v_rewritten, ', '),
                   CASE WHEN cardinality(v_rewritten) = 1 THEN 'its' ELSE 'their' END)
            USING DETAIL = 'Each rewrite copies the table and rebuilds its indexes, and each foreign key on a widened column is checked again; the locks block reads and writes until the transaction ends.  The undo script leaves these columns bigint.';
    END IF;

    IF NOT dry_run THEN
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

-- snowflake_stats gains marks_by_callers and marks_ahead: which marks calls
-- wrote themselves and which the background mark writer wrote ahead of
-- need; marks_written stays their sum.  The view depends on the function,
-- so both are made again (with the view's grant; the comments follow).

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
    OUT marks_by_callers bigint,
    OUT marks_ahead bigint,
    OUT clock_rollbacks bigint,
    OUT largest_rollback_ms bigint,
    OUT borrows bigint,
    OUT waits bigint,
    OUT wait_time_ms double precision,
    OUT refusals bigint,
    OUT stats_reset timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_stats_1_3'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE VIEW snowflake_stats AS
    SELECT * FROM snowflake_stats();

COMMENT ON VIEW snowflake_stats IS
'One row: the generator''s settings, state and counters';

GRANT SELECT ON snowflake_stats TO PUBLIC;

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
