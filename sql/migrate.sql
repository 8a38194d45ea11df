--
-- snowflake_migrate(): every path and every refusal.  The instance preloads
-- snowflake with worker_id = 1.  Output never shows an ID: statements,
-- sequence positions and checks made in SQL only.
--
SET TimeZone = 'UTC';
\set SHOW_CONTEXT never

-- The column's default, the sequence behind it, and its type, for checks.
CREATE FUNCTION pg_temp.col(tbl regclass, col name DEFAULT 'id')
RETURNS TABLE (type text, "default" text, identity "char", serial_sequence text)
LANGUAGE sql AS $$
    SELECT format_type(a.atttypid, a.atttypmod), pg_get_expr(d.adbin, d.adrelid),
           a.attidentity, pg_get_serial_sequence(tbl::text, col)
      FROM pg_attribute a
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE a.attrelid = tbl AND a.attname = col
$$;

-- A statement as printed: the OIDs that the type changes check their
-- table's name against (see snowflake.migrate) change every run.
CREATE FUNCTION pg_temp.masked(statement text) RETURNS text
LANGUAGE sql AS $$
    SELECT regexp_replace(statement, '[0-9]+::pg_catalog\.oid', '<oid>::pg_catalog.oid', 'g')
$$;

-- Rows whose IDs came from this server's generator just now.
CREATE FUNCTION pg_temp.fresh_ids(tbl regclass, col name DEFAULT 'id')
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM %s t, snowflake_parse(t.%I) p
                     WHERE p.worker_id = 1
                       AND p.created_at > now() - interval ''1 minute''', tbl, col)
       INTO n;
    RETURN n;
END
$$;

--
-- bigserial: a dry run changes nothing, the real run returns the same
-- statements, and the undo script brings the sequence back.
--
CREATE TABLE accounts (id bigserial PRIMARY KEY, name text);
INSERT INTO accounts (name) VALUES ('a'), ('b'), ('c');

SELECT * FROM snowflake_migrate('accounts', dry_run => true);
SELECT * FROM pg_temp.col('accounts');

CREATE TEMP TABLE accounts_migration AS
    SELECT * FROM snowflake_migrate('accounts');
SELECT * FROM accounts_migration ORDER BY kind, step;
SELECT * FROM pg_temp.col('accounts');
-- the old sequence is detached and kept where it was, with a comment
-- that says why
SELECT last_value, is_called FROM accounts_id_seq;
SELECT obj_description('accounts_id_seq'::regclass, 'pg_class') AS kept_comment;
INSERT INTO accounts (name) VALUES ('d'), ('e');
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids,
       pg_temp.fresh_ids('accounts') AS new_ids,
       min(id) FILTER (WHERE name >= 'd') > max(id) FILTER (WHERE name < 'd') AS above_old
  FROM accounts;

-- twice is a no-op
SELECT * FROM snowflake_migrate('accounts');
SELECT * FROM snowflake_migrate('accounts', dry_run => true);

-- undo: the sequence default and its ownership return; the sequence goes on
-- from where it stood
SELECT statement FROM accounts_migration WHERE kind = 'undo' ORDER BY step \gexec
SELECT * FROM pg_temp.col('accounts');
SELECT obj_description('accounts_id_seq'::regclass, 'pg_class') AS comment_after_undo;
INSERT INTO accounts (name) VALUES ('f') RETURNING id;

-- a dry run takes no lock beyond reading; the real run holds ACCESS
-- EXCLUSIVE until the end of the caller's transaction, and a rollback
-- undoes everything
BEGIN;
SELECT count(*) AS statements FROM snowflake_migrate('accounts', dry_run => true);
SELECT mode FROM pg_locks
 WHERE relation = 'accounts'::regclass AND pid = pg_backend_pid() ORDER BY mode;
SELECT count(*) AS statements FROM snowflake_migrate('accounts');
SELECT mode FROM pg_locks
 WHERE relation = 'accounts'::regclass AND pid = pg_backend_pid() ORDER BY mode;
SELECT "default" FROM pg_temp.col('accounts');
ROLLBACK;
SELECT * FROM pg_temp.col('accounts');

-- under REPEATABLE READ or SERIALIZABLE every read would be as of a
-- snapshot taken before the lock: refused, except for a dry run
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) AS statements FROM snowflake_migrate('accounts', dry_run => true);
SELECT * FROM snowflake_migrate('accounts');
ROLLBACK;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT * FROM snowflake_migrate('accounts', widen => true);
ROLLBACK;
SELECT "default" FROM pg_temp.col('accounts');

--
-- serial (integer) with foreign keys: refused without widen; widen changes
-- the key and every referencing column (in a chain, and only the matching
-- column of a multi-column key) to bigint.
--
CREATE TABLE parent (id serial PRIMARY KEY, name text);
CREATE TABLE child (id bigserial PRIMARY KEY,
                    parent_id integer REFERENCES parent,
                    backup_parent smallint REFERENCES parent (id),
                    n integer NOT NULL,
                    UNIQUE (parent_id, n));
CREATE TABLE grandchild (parent_id integer, n integer, note integer,
                         FOREIGN KEY (parent_id, n) REFERENCES child (parent_id, n));
CREATE TABLE sibling (id bigint PRIMARY KEY, parent_id bigint REFERENCES parent);
INSERT INTO parent (name) VALUES ('p1'), ('p2');
-- a sequence with a comment of its own gets it back from the undo script
COMMENT ON SEQUENCE parent_id_seq IS 'ids of parents';
INSERT INTO child (parent_id, backup_parent, n) VALUES (1, 2, 1), (2, NULL, 1);
INSERT INTO grandchild VALUES (1, 1, 7);

SELECT * FROM snowflake_migrate('parent');
SELECT kind, step, pg_temp.masked(statement) AS statement
  FROM snowflake_migrate('parent', dry_run => true, widen => true);
SELECT * FROM pg_temp.col('parent');

CREATE TEMP TABLE parent_migration AS
    SELECT * FROM snowflake_migrate('parent', widen => true);
SELECT kind, step, pg_temp.masked(statement) AS statement FROM parent_migration ORDER BY kind, step;
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) AS type
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
 WHERE c.relname IN ('parent', 'child', 'grandchild', 'sibling')
   AND a.attnum > 0
 ORDER BY 1, 2;
SELECT conrelid::regclass, conname, convalidated
  FROM pg_constraint WHERE contype = 'f' ORDER BY 1, 2;

WITH p AS (INSERT INTO parent (name) VALUES ('p3') RETURNING id)
INSERT INTO child (parent_id, n) SELECT id, 1 FROM p;
SELECT pg_temp.fresh_ids('parent') AS new_parents,
       pg_temp.fresh_ids('child', 'parent_id') AS children_of_new_parents;

-- a bigint key whose referencing columns are narrow is refused too
CREATE TABLE orders (id bigserial PRIMARY KEY);
CREATE TABLE order_items (order_id integer REFERENCES orders);
SELECT * FROM snowflake_migrate('orders');

-- the undo script leaves the widened columns bigint
SELECT statement FROM parent_migration WHERE kind = 'undo' ORDER BY step \gexec
SELECT * FROM pg_temp.col('parent');
SELECT obj_description('parent_id_seq'::regclass, 'pg_class') AS comment_after_undo;

--
-- identity, GENERATED ALWAYS, integer: the identity sequence is kept as a
-- plain sequence at the same position; the undo script restores the
-- identity and its position.
--
CREATE TABLE events (id integer GENERATED ALWAYS AS IDENTITY (START WITH 100 INCREMENT BY 10)
                     PRIMARY KEY, what text);
INSERT INTO events (what) VALUES ('x'), ('y');

SELECT * FROM snowflake_migrate('events');
SELECT kind, step, pg_temp.masked(statement) AS statement
  FROM snowflake_migrate('events', dry_run => true, widen => true);
CREATE TEMP TABLE events_migration AS
    SELECT * FROM snowflake_migrate('events', widen => true);
SELECT kind, step, pg_temp.masked(statement) AS statement FROM events_migration ORDER BY kind, step;
SELECT * FROM pg_temp.col('events');
SELECT sequencename, data_type, start_value, increment_by, last_value
  FROM pg_sequences WHERE sequencename = 'events_id_seq';
SELECT obj_description('events_id_seq'::regclass, 'pg_class') AS kept_comment;
-- ALWAYS no longer applies: the column has a plain default
INSERT INTO events (what) VALUES ('z');
INSERT INTO events (id, what) VALUES (1, 'explicit');
SELECT pg_temp.fresh_ids('events') AS new_ids;
DELETE FROM events WHERE id = 1;

SELECT statement FROM events_migration WHERE kind = 'undo' ORDER BY step \gexec
SELECT * FROM pg_temp.col('events');
SELECT obj_description('events_id_seq'::regclass, 'pg_class') AS comment_after_undo;
INSERT INTO events (what) VALUES ('after undo') RETURNING id;
INSERT INTO events (id, what) VALUES (1, 'explicit');

--
-- identity, GENERATED BY DEFAULT, bigint, never used yet
--
CREATE TABLE notes (id bigint GENERATED BY DEFAULT AS IDENTITY, body text);
SELECT * FROM snowflake_migrate('notes') ORDER BY kind, step;
SELECT * FROM pg_temp.col('notes');
SELECT last_value, is_called FROM notes_id_seq;

--
-- a sequence the column does not own (shared with another table): it is
-- left owned as it was, and the undo script sets the default back only
--
CREATE SEQUENCE shared_seq;
CREATE TABLE shared_a (id bigint DEFAULT nextval('shared_seq'));
CREATE TABLE shared_b (id bigint DEFAULT nextval('shared_seq'));
INSERT INTO shared_a DEFAULT VALUES;
SELECT * FROM snowflake_migrate('shared_a') ORDER BY kind, step;
SELECT * FROM pg_temp.col('shared_b');
SELECT obj_description('shared_seq'::regclass, 'pg_class') AS not_commented;

--
-- a partitioned table: the default reaches the partitions
--
CREATE TABLE measurements (id bigserial, day date NOT NULL) PARTITION BY RANGE (day);
CREATE TABLE measurements_2025 PARTITION OF measurements
    FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
INSERT INTO measurements (day) VALUES ('2025-06-01');
SELECT * FROM snowflake_migrate('measurements') ORDER BY kind, step;
SELECT * FROM pg_temp.col('measurements_2025');
INSERT INTO measurements_2025 (day) VALUES ('2025-06-02');
SELECT pg_temp.fresh_ids('measurements') AS new_ids;

--
-- awkward names: another schema, spaces, quotes, mixed case
--
CREATE SCHEMA "Sales Dept";
CREATE TABLE "Sales Dept"."Order ""Lines""" (
    "Line Id" integer GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    "Qty" integer);
CREATE TABLE "Sales Dept"."Ship'ments" (
    "Line Ref" integer REFERENCES "Sales Dept"."Order ""Lines""");
INSERT INTO "Sales Dept"."Order ""Lines""" ("Qty") VALUES (1), (2);
INSERT INTO "Sales Dept"."Ship'ments" VALUES (2);
SELECT * FROM snowflake_migrate('"Sales Dept"."Order ""Lines"""', 'line id');
CREATE TEMP TABLE awkward_migration AS
    SELECT * FROM snowflake_migrate('"Sales Dept"."Order ""Lines"""', 'Line Id', widen => true);
SELECT kind, step, pg_temp.masked(statement) AS statement FROM awkward_migration ORDER BY kind, step;
SELECT * FROM pg_temp.col('"Sales Dept"."Order ""Lines"""', 'Line Id');
SELECT * FROM pg_temp.col('"Sales Dept"."Ship''ments"', 'Line Ref');
WITH o AS (INSERT INTO "Sales Dept"."Order ""Lines""" ("Qty") VALUES (3) RETURNING "Line Id")
INSERT INTO "Sales Dept"."Ship'ments" SELECT "Line Id" FROM o;
SELECT pg_temp.fresh_ids('"Sales Dept"."Ship''ments"', 'Line Ref') AS new_refs;
SELECT statement FROM awkward_migration WHERE kind = 'undo' ORDER BY step \gexec
SELECT * FROM pg_temp.col('"Sales Dept"."Order ""Lines"""', 'Line Id');
INSERT INTO "Sales Dept"."Order ""Lines""" ("Qty") VALUES (4) RETURNING "Line Id";

--
-- serial columns whose sequences have names that need quoting, backslash
-- included: pg_get_expr() writes 'a\b' where format('%L') writes E'a\\b',
-- so the default is recognized from its expression tree, not its text
--
CREATE SCHEMA "Back\Office ""EU"" Team";
CREATE TABLE "Back\Office ""EU"" Team"."Li'l Tab\le" (
    "Row Id" serial PRIMARY KEY,
    "Big\Id" bigserial,
    note text);
INSERT INTO "Back\Office ""EU"" Team"."Li'l Tab\le" (note) VALUES ('a'), ('b');
SELECT * FROM pg_temp.col('"Back\Office ""EU"" Team"."Li''l Tab\le"', 'Row Id');
SELECT * FROM pg_temp.col('"Back\Office ""EU"" Team"."Li''l Tab\le"', 'Big\Id');
BEGIN;
CREATE TEMP TABLE backslash_migration AS
    SELECT 'Row Id' AS col, *
      FROM snowflake_migrate('"Back\Office ""EU"" Team"."Li''l Tab\le"', 'Row Id', widen => true);
INSERT INTO backslash_migration
    SELECT 'Big\Id', *
      FROM snowflake_migrate('"Back\Office ""EU"" Team"."Li''l Tab\le"', 'Big\Id');
COMMIT;
SELECT col, kind, step, pg_temp.masked(statement) AS statement
  FROM backslash_migration ORDER BY col DESC, kind, step;
SELECT * FROM pg_temp.col('"Back\Office ""EU"" Team"."Li''l Tab\le"', 'Row Id');
SELECT * FROM pg_temp.col('"Back\Office ""EU"" Team"."Li''l Tab\le"', 'Big\Id');
INSERT INTO "Back\Office ""EU"" Team"."Li'l Tab\le" (note) VALUES ('c');
SELECT pg_temp.fresh_ids('"Back\Office ""EU"" Team"."Li''l Tab\le"', 'Row Id') AS new_row_ids,
       pg_temp.fresh_ids('"Back\Office ""EU"" Team"."Li''l Tab\le"', 'Big\Id') AS new_big_ids;
-- undo, the later migration first; both sequences go on where they stood
SELECT statement FROM backslash_migration WHERE kind = 'undo' ORDER BY col, step \gexec
SELECT * FROM pg_temp.col('"Back\Office ""EU"" Team"."Li''l Tab\le"', 'Row Id');
SELECT * FROM pg_temp.col('"Back\Office ""EU"" Team"."Li''l Tab\le"', 'Big\Id');
INSERT INTO "Back\Office ""EU"" Team"."Li'l Tab\le" (note) VALUES ('d')
    RETURNING "Row Id", "Big\Id";
-- and it migrates again
SELECT count(*) AS statements
  FROM snowflake_migrate('"Back\Office ""EU"" Team"."Li''l Tab\le"', 'Big\Id');

--
-- a table created with DEFAULT snowflake_nextval(): nothing to do
--
CREATE TABLE native (id bigint PRIMARY KEY DEFAULT snowflake_nextval());
SELECT * FROM snowflake_migrate('native');

--
-- refusals
--
SELECT * FROM snowflake_migrate(NULL);
SELECT * FROM snowflake_migrate(to_regclass('no_such_table'));
SELECT * FROM snowflake_migrate('accounts', NULL);
SELECT * FROM snowflake_migrate('accounts', dry_run => NULL);
SELECT * FROM snowflake_migrate('no_such_table');
CREATE VIEW accounts_view AS SELECT * FROM accounts;
SELECT * FROM snowflake_migrate('accounts_view');
SELECT * FROM snowflake_migrate('accounts_id_seq');
SELECT * FROM snowflake_migrate('accounts', 'nope');
SELECT * FROM snowflake_migrate('accounts', 'name');
CREATE TABLE odd (id bigint, plain_default bigint DEFAULT 42,
                  wrapped bigint DEFAULT nextval('shared_seq') + 0,
                  gen bigint GENERATED ALWAYS AS (id * 2) STORED,
                  num numeric DEFAULT nextval('shared_seq'));
SELECT * FROM snowflake_migrate('odd');
SELECT * FROM snowflake_migrate('odd', 'plain_default');
SELECT * FROM snowflake_migrate('odd', 'wrapped');
SELECT * FROM snowflake_migrate('odd', 'gen');
SELECT * FROM snowflake_migrate('odd', 'num', widen => true);

-- an existing value at or above the next ID (masked: it changes every run)
CREATE TABLE ahead (id bigserial PRIMARY KEY);
INSERT INTO ahead VALUES (DEFAULT), (9000000000000000000);
CREATE FUNCTION pg_temp.masked_error(sql text)
RETURNS TABLE (code text, message text, detail text, hint text)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE sql;
    code := 'no error';
    RETURN NEXT;
EXCEPTION WHEN others THEN
    GET STACKED DIAGNOSTICS code = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
                            detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
    message := regexp_replace(message, '(next snowflake ID) \d+', '\1 <next id>');
    detail := regexp_replace(detail, '(above) \d+', '\1 <next id>');
    RETURN NEXT;
END
$$;
\x on
SELECT * FROM pg_temp.masked_error($$SELECT snowflake_migrate('ahead')$$);
SELECT * FROM pg_temp.masked_error($$SELECT snowflake_migrate('ahead', dry_run => true)$$);
\x off
SELECT * FROM pg_temp.col('ahead');
DELETE FROM ahead WHERE id = 9000000000000000000;
SELECT count(*) AS statements FROM snowflake_migrate('ahead');

--
-- ownership, not superuser: a non-owner is refused (even for a dry run),
-- the owner succeeds, and so does a member of the owning role
--
CREATE ROLE snowflake_app;
CREATE ROLE snowflake_stranger;
CREATE ROLE snowflake_admin IN ROLE snowflake_app;
CREATE SCHEMA app AUTHORIZATION snowflake_app;
SET ROLE snowflake_app;
CREATE TABLE app.users (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, login text);
CREATE TABLE app.sessions (id bigserial PRIMARY KEY, user_id integer REFERENCES app.users);
CREATE TABLE app.tokens (id bigserial PRIMARY KEY);
INSERT INTO app.users (login) VALUES ('ann');
GRANT USAGE ON SCHEMA app TO snowflake_stranger;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA app TO snowflake_stranger;
RESET ROLE;

SET ROLE snowflake_stranger;
SELECT * FROM snowflake_migrate('app.users', widen => true);
SELECT * FROM snowflake_migrate('app.users', dry_run => true, widen => true);
ALTER TABLE app.users ALTER COLUMN id DROP IDENTITY;
RESET ROLE;

-- widening reaches a referencing table of another owner: refused
CREATE TABLE stranger_refs (user_id integer REFERENCES app.users);
ALTER TABLE stranger_refs OWNER TO snowflake_stranger;
SET ROLE snowflake_app;
SELECT * FROM snowflake_migrate('app.users', widen => true);
RESET ROLE;
DROP TABLE stranger_refs;

SET ROLE snowflake_app;
SELECT kind, step, pg_temp.masked(statement) AS statement FROM snowflake_migrate('app.users', widen => true)
 ORDER BY kind, step;
SELECT * FROM pg_temp.col('app.users');
SELECT sequencename, sequenceowner FROM pg_sequences WHERE schemaname = 'app'
 ORDER BY 1;
INSERT INTO app.users (login) VALUES ('bob');
SELECT pg_temp.fresh_ids('app.users') AS new_ids;
RESET ROLE;

-- a member of the owning role: the kept sequence goes to the table's owner
SET ROLE snowflake_admin;
CREATE TABLE app.audit (id bigint GENERATED BY DEFAULT AS IDENTITY);
ALTER TABLE app.audit OWNER TO snowflake_app;
SELECT kind, step, statement FROM snowflake_migrate('app.audit') ORDER BY kind, step;
RESET ROLE;
SELECT sequencename, sequenceowner FROM pg_sequences WHERE schemaname = 'app'
 ORDER BY 1;

SET ROLE snowflake_stranger;
SELECT * FROM snowflake_migrate('app.tokens');
RESET ROLE;

-- identity: the kept copy of the sequence is a new sequence that the caller
-- creates, so a table owner without CREATE on the schema is refused before
-- anything changes (dry run or not), with what to grant
CREATE SCHEMA shop;
GRANT USAGE, CREATE ON SCHEMA shop TO snowflake_app;
SET ROLE snowflake_app;
CREATE TABLE shop.items (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text);
INSERT INTO shop.items (name) VALUES ('pen');
RESET ROLE;
REVOKE CREATE ON SCHEMA shop FROM snowflake_app;
SET ROLE snowflake_app;
SELECT * FROM snowflake_migrate('shop.items');
SELECT code FROM pg_temp.masked_error($$SELECT snowflake_migrate('shop.items', dry_run => true)$$);
SELECT * FROM pg_temp.col('shop.items');
RESET ROLE;
-- a member of the owning role may create there, but the copy goes to the
-- owner, which may not
GRANT CREATE ON SCHEMA shop TO snowflake_admin;
SET ROLE snowflake_admin;
SELECT * FROM snowflake_migrate('shop.items');
SELECT * FROM pg_temp.col('shop.items');
RESET ROLE;
-- with the grant it goes through
GRANT CREATE ON SCHEMA shop TO snowflake_app;
SET ROLE snowflake_admin;
SELECT kind, step, statement FROM snowflake_migrate('shop.items') ORDER BY kind, step;
RESET ROLE;
SELECT sequencename, sequenceowner FROM pg_sequences WHERE schemaname = 'shop';
DROP SCHEMA shop CASCADE;

DROP SCHEMA app CASCADE;
DROP ROLE snowflake_admin;
DROP ROLE snowflake_app;
DROP ROLE snowflake_stranger;

-- the function's own markings
SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict, p.proparallel,
       p.prosecdef, p.proconfig
  FROM pg_proc p WHERE p.proname = 'snowflake_migrate';

DROP SCHEMA "Sales Dept", "Back\Office ""EU"" Team" CASCADE;
DROP TABLE accounts, parent, child, grandchild, sibling, orders, order_items,
    events, notes, shared_a, shared_b, measurements, native, odd, ahead CASCADE;
DROP SEQUENCE shared_seq, notes_id_seq, measurements_id_seq, ahead_id_seq;
