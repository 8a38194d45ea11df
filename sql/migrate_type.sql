--
-- snowflake_migrate(..., to_type => true): the key, and every column that
-- references it, moves to the column type snowflake; the undo script
-- changes them back to bigint without a rewrite.  The instance preloads
-- snowflake with worker_id = 1.  Output shows no ID and no OID: the type's
-- OID in the statements is masked.
--
SET TimeZone = 'UTC';
\set SHOW_CONTEXT never

-- snowflake_migrate's rows, the type's OID masked
CREATE FUNCTION pg_temp.migrate(tbl regclass, col name DEFAULT 'id',
                                dry_run boolean DEFAULT false,
                                widen boolean DEFAULT false,
                                to_type boolean DEFAULT true)
RETURNS TABLE (kind text, step integer, statement text)
LANGUAGE sql AS $$
    SELECT m.kind, m.step,
           regexp_replace(m.statement, '[0-9]+::pg_catalog\.oid', '<oid>::pg_catalog.oid', 'g')
      FROM snowflake_migrate(tbl, col, dry_run, widen, to_type) m
$$;

-- Columns by table and name: type and default.
CREATE FUNCTION pg_temp.cols(tables text[])
RETURNS TABLE (tbl name, col name, type text, "default" text)
LANGUAGE sql AS $$
    SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
           pg_get_expr(d.adbin, d.adrelid)
      FROM pg_class c
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE c.relname = ANY (tables)
     ORDER BY 1, a.attnum
$$;

-- The storage of the tables and of their indexes, to compare before and
-- after: a rewrite gives a relation a new file.
CREATE TEMP TABLE files (relname name, relfilenode oid);
CREATE FUNCTION pg_temp.keep_files(tables text[]) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM files;
    INSERT INTO files
    SELECT c.relname, c.relfilenode FROM pg_class c
     WHERE c.relname = ANY (tables)
        OR c.oid IN (SELECT i.indexrelid FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
                      WHERE t.relname = ANY (tables));
$$;
CREATE FUNCTION pg_temp.rewritten()
RETURNS TABLE (relname name, rewritten boolean)
LANGUAGE sql AS $$
    SELECT f.relname, c.relfilenode <> f.relfilenode
      FROM files f JOIN pg_class c ON c.relname = f.relname
     ORDER BY 1
$$;

--
-- bigserial, with a bigint and an integer column referencing it, one of
-- them through a chain: a dry run, the migration, JSON, the undo.
--
CREATE TABLE orders (id bigserial PRIMARY KEY, note text);
CREATE TABLE lines (id bigserial PRIMARY KEY, order_id bigint NOT NULL REFERENCES orders,
                    n integer NOT NULL, UNIQUE (order_id, n));
CREATE TABLE line_notes (order_id integer, n integer, note text,
                         FOREIGN KEY (order_id, n) REFERENCES lines (order_id, n));
CREATE INDEX ON line_notes (order_id);
INSERT INTO orders (note) VALUES ('a'), ('b');
INSERT INTO lines (order_id, n) VALUES (1, 1), (1, 2), (2, 1);
INSERT INTO line_notes VALUES (1, 2, 'x');

SELECT * FROM pg_temp.migrate('orders', dry_run => true);
SELECT * FROM pg_temp.cols('{orders,lines,line_notes}');

SELECT pg_temp.keep_files('{orders,lines,line_notes}');
CREATE TEMP TABLE orders_migration AS SELECT * FROM snowflake_migrate('orders', to_type => true);
SELECT * FROM pg_temp.cols('{orders,lines,line_notes}');
-- every table with a changed column is rewritten, with its indexes; the
-- foreign keys stay, valid
SELECT * FROM pg_temp.rewritten();
SELECT conrelid::regclass, conname, convalidated FROM pg_constraint
 WHERE contype = 'f' AND conrelid IN ('lines'::regclass, 'line_notes'::regclass) ORDER BY 2;

-- new rows take snowflake IDs, and JSON writes every key as a string
WITH o AS (INSERT INTO orders (note) VALUES ('c') RETURNING id),
     l AS (INSERT INTO lines (order_id, n) SELECT id, 1 FROM o RETURNING order_id, n)
INSERT INTO line_notes SELECT order_id, n, 'new' FROM l;
SELECT json_typeof(row_to_json(o) -> 'id') AS orders_id,
       json_typeof(row_to_json(l) -> 'order_id') AS lines_order_id,
       json_typeof(row_to_json(ln) -> 'order_id') AS line_notes_order_id,
       (row_to_json(o) ->> 'id')::bigint = o.id AS exact
  FROM orders o
  JOIN lines l ON l.order_id = o.id
  JOIN line_notes ln ON ln.order_id = o.id
 WHERE o.note = 'c';
SELECT count(*) AS new_orders FROM orders, snowflake_parse(id) p
 WHERE p.worker_id = 1 AND p.created_at > now() - interval '1 minute';

-- twice: nothing to do, with or without to_type
SELECT * FROM pg_temp.migrate('orders');
SELECT * FROM pg_temp.migrate('orders', to_type => false);

-- the undo: back to bigint, without a rewrite, and the sequence default
SELECT pg_temp.keep_files('{orders,lines,line_notes}');
SELECT statement FROM orders_migration WHERE kind = 'undo' ORDER BY step \gexec
SELECT * FROM pg_temp.cols('{orders,lines,line_notes}');
SELECT * FROM pg_temp.rewritten();
SELECT conrelid::regclass, conname, convalidated FROM pg_constraint
 WHERE contype = 'f' AND conrelid IN ('lines'::regclass, 'line_notes'::regclass) ORDER BY 2;
INSERT INTO orders (note) VALUES ('d') RETURNING id < 1000 AS from_the_sequence;

--
-- identity, integer: straight to the type (no widen needed), and back
--
CREATE TABLE events (id integer GENERATED ALWAYS AS IDENTITY (START WITH 100) PRIMARY KEY,
                     what text);
INSERT INTO events (what) VALUES ('x'), ('y');
SELECT * FROM pg_temp.migrate('events', to_type => false);
CREATE TEMP TABLE events_migration AS SELECT * FROM pg_temp.migrate('events');
SELECT * FROM events_migration ORDER BY kind, step;
SELECT * FROM pg_temp.cols('{events}');
INSERT INTO events (what) VALUES ('z');
SELECT count(*) AS new_events FROM events, snowflake_parse(id) p
 WHERE p.worker_id = 1 AND p.created_at > now() - interval '1 minute';
SELECT statement FROM events_migration WHERE kind = 'undo' ORDER BY step \gexec
SELECT * FROM pg_temp.cols('{events}');
SELECT attidentity FROM pg_attribute WHERE attrelid = 'events'::regclass AND attname = 'id';
INSERT INTO events (what) VALUES ('after undo') RETURNING id;

--
-- a key that defaults to snowflake_nextval() already: only the type
-- changes, its own and its referencing columns'; the undo changes them
-- back and nothing else
--
CREATE TABLE native (id bigint PRIMARY KEY DEFAULT snowflake_nextval());
CREATE TABLE native_refs (native_id bigint REFERENCES native);
INSERT INTO native DEFAULT VALUES;
INSERT INTO native_refs SELECT id FROM native;
SELECT * FROM pg_temp.migrate('native', to_type => false);
CREATE TEMP TABLE native_migration AS SELECT * FROM pg_temp.migrate('native');
SELECT * FROM native_migration ORDER BY kind, step;
SELECT * FROM pg_temp.cols('{native,native_refs}');
-- a referencing column added later, as bigint: the next call changes it alone
CREATE TABLE native_late (native_id bigint REFERENCES native);
SELECT * FROM pg_temp.migrate('native');
SELECT * FROM pg_temp.migrate('native');
-- the undo of the first call: its own columns back to bigint, the default
-- a plain call again
SELECT statement FROM native_migration WHERE kind = 'undo' ORDER BY step \gexec
SELECT * FROM pg_temp.cols('{native,native_refs,native_late}');
SELECT d.adbin ~ '^\{FUNCEXPR :funcid [0-9]+ :funcresulttype 20 ' AS plain_call
  FROM pg_attrdef d WHERE d.adrelid = 'native'::regclass;

--
-- a column of the type with a sequence default: the default moves, and
-- only the referencing columns change type
--
CREATE SEQUENCE typed_seq;
CREATE TABLE typed (id snowflake PRIMARY KEY DEFAULT nextval('typed_seq'));
CREATE TABLE typed_refs (typed_id integer REFERENCES typed);
SELECT * FROM pg_temp.migrate('typed', to_type => false);
SELECT * FROM pg_temp.migrate('typed', dry_run => true);

--
-- partitioned tables: the key of a table partitioned by time, and a
-- partitioned table referencing it through a two-column key; ALTER TABLE
-- on a partitioned table reaches its partitions
--
CREATE TABLE measurements (id bigserial, day date NOT NULL, PRIMARY KEY (id, day))
    PARTITION BY RANGE (day);
CREATE TABLE measurements_2025 PARTITION OF measurements
    FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
CREATE TABLE readings (measurement_id bigint, day date, value numeric,
                       FOREIGN KEY (measurement_id, day) REFERENCES measurements)
    PARTITION BY RANGE (day);
CREATE TABLE readings_2025 PARTITION OF readings
    FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
INSERT INTO measurements (day) VALUES ('2025-06-01');
INSERT INTO readings VALUES (1, '2025-06-01', 1.5);
SELECT * FROM pg_temp.migrate('measurements') ORDER BY kind, step;
SELECT * FROM pg_temp.cols('{measurements,measurements_2025,readings,readings_2025}');
INSERT INTO measurements_2025 (day) VALUES ('2025-06-02');
SELECT count(*) AS new_measurements FROM measurements, snowflake_parse(id) p
 WHERE p.worker_id = 1 AND p.created_at > now() - interval '1 minute';

-- partitioned by the key itself: its type cannot change
CREATE TABLE by_id (id bigserial PRIMARY KEY) PARTITION BY RANGE (id);
CREATE TABLE by_id_low PARTITION OF by_id FOR VALUES FROM (0) TO (1000000);
SELECT * FROM pg_temp.migrate('by_id', dry_run => true);
SELECT * FROM pg_temp.migrate('by_id');
-- nor a referencing column that partitions its table (here by an
-- expression)
CREATE TABLE by_ref (order_id bigint REFERENCES orders) PARTITION BY LIST ((order_id % 2));
SELECT * FROM pg_temp.migrate('orders', dry_run => true);
DROP TABLE by_ref;

--
-- what ALTER COLUMN ... TYPE would refuse, all listed before anything
-- changes, in a dry run too
--
CREATE TABLE shop (id bigserial PRIMARY KEY, total bigint,
                   doubled bigint GENERATED ALWAYS AS (id * 2) STORED);
CREATE TABLE shop_refs (shop_id integer REFERENCES shop, note text);
CREATE VIEW shop_view AS SELECT id FROM shop;
CREATE MATERIALIZED VIEW shop_refs_mv AS SELECT shop_id FROM shop_refs;
CREATE FUNCTION shop_count() RETURNS bigint LANGUAGE sql
BEGIN ATOMIC SELECT count(*) FROM shop_refs WHERE shop_id > 0; END;
CREATE FUNCTION shop_trigger() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END';
CREATE TRIGGER shop_refs_moved BEFORE UPDATE ON shop_refs
    FOR EACH ROW WHEN (OLD.shop_id IS DISTINCT FROM NEW.shop_id) EXECUTE FUNCTION shop_trigger();
ALTER TABLE shop_refs ENABLE ROW LEVEL SECURITY;
CREATE POLICY shop_refs_some ON shop_refs USING (shop_id > 0);
SELECT * FROM pg_temp.migrate('shop', dry_run => true);
SELECT * FROM pg_temp.migrate('shop');
SELECT * FROM pg_temp.cols('{shop,shop_refs}');
DROP VIEW shop_view;
DROP MATERIALIZED VIEW shop_refs_mv;
DROP FUNCTION shop_count();
DROP TRIGGER shop_refs_moved ON shop_refs;
DROP POLICY shop_refs_some ON shop_refs;
ALTER TABLE shop DROP COLUMN doubled;
-- with them gone, it goes through
SELECT count(*) AS statements FROM snowflake_migrate('shop', to_type => true);
SELECT * FROM pg_temp.cols('{shop,shop_refs}');

-- negative numbers, in the key or in a referencing column (here one whose
-- foreign key was never validated): the type refuses them, before
-- anything changes
CREATE TABLE ledger (id bigserial PRIMARY KEY);
CREATE TABLE ledger_refs (ledger_id bigint);
INSERT INTO ledger VALUES (DEFAULT), (-5);
INSERT INTO ledger_refs VALUES (-7);
ALTER TABLE ledger_refs ADD FOREIGN KEY (ledger_id) REFERENCES ledger NOT VALID;
SELECT * FROM pg_temp.migrate('ledger', dry_run => true);
SELECT * FROM pg_temp.migrate('ledger');
SELECT * FROM pg_temp.cols('{ledger,ledger_refs}');
DELETE FROM ledger_refs;
DELETE FROM ledger WHERE id < 0;
SELECT count(*) AS statements FROM snowflake_migrate('ledger', to_type => true);

-- a referencing table of another owner
CREATE ROLE snowflake_type_owner;
CREATE ROLE snowflake_type_stranger;
GRANT CREATE ON SCHEMA public TO snowflake_type_owner, snowflake_type_stranger;
SET ROLE snowflake_type_owner;
CREATE TABLE owned (id bigserial PRIMARY KEY);
GRANT REFERENCES ON owned TO snowflake_type_stranger;
SET ROLE snowflake_type_stranger;
CREATE TABLE owned_refs (owned_id bigint REFERENCES owned);
SET ROLE snowflake_type_owner;
SELECT * FROM pg_temp.migrate('owned', dry_run => true);
RESET ROLE;
DROP TABLE owned_refs, owned;
REVOKE CREATE ON SCHEMA public FROM snowflake_type_owner, snowflake_type_stranger;
DROP ROLE snowflake_type_owner;
DROP ROLE snowflake_type_stranger;

-- arguments
SELECT * FROM snowflake_migrate('orders', to_type => NULL);
SELECT * FROM snowflake.migrate('orders', 'id', true, false, true, 1, NULL, NULL);

DROP TABLE orders, lines, line_notes, events, native, native_refs, native_late,
    typed, typed_refs, measurements, readings, by_id, shop, shop_refs, ledger,
    ledger_refs CASCADE;
DROP FUNCTION shop_trigger();
DROP SEQUENCE measurements_id_seq, shop_id_seq, ledger_id_seq, typed_seq;
