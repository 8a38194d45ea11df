--
-- The column type snowflake: a bigint to PostgreSQL (its storage, its text
-- and binary forms, bigint's operators, indexes and joins through a free
-- implicit cast), a string to JSON.  Every way in refuses a negative
-- number.  Plans are shown where an implicit cast makes something work.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
\set SHOW_CONTEXT never

-- What it is: bigint's storage, the numeric category (not preferred), no
-- operators of its own, and its casts.
SELECT typname, typlen, typbyval, typalign, typstorage, typcategory, typispreferred
  FROM pg_type WHERE oid = 'snowflake'::regtype;
SELECT count(*) AS own_operators FROM pg_operator
 WHERE 'snowflake'::regtype IN (oprleft, oprright, oprresult);
SELECT castsource::regtype AS source, casttarget::regtype AS target,
       castcontext AS context, castmethod AS method, castfunc::regprocedure AS function
  FROM pg_cast WHERE 'snowflake'::regtype IN (castsource, casttarget)
 ORDER BY castcontext DESC, castsource::regtype::text;

--
-- Text in and out: bigint's decimal form, and what int8in refuses, plus
-- every negative number.
--
SELECT '0'::snowflake AS zero, '250592571728859136'::snowflake AS id,
       '9223372036854775807'::snowflake AS largest, ' +42 '::snowflake AS padded,
       '-0'::snowflake AS minus_zero;
SELECT '-1'::snowflake;
SELECT '-9223372036854775808'::snowflake;
SELECT '9223372036854775808'::snowflake;
SELECT 'abc'::snowflake;
SELECT ''::snowflake;
SELECT '1.5'::snowflake;
-- to and from text through the input and output functions
SELECT '250592571728859136'::snowflake::text AS as_text,
       '250592571728859136'::text::snowflake AS from_text;
SELECT '-5'::text::snowflake;

-- Binary out is bigint's eight bytes.  (Binary in: t/205_type_binary_copy.pl
-- and t/308_type_logical.pl.)
SELECT snowflake_send('250592571728859136') = int8send(250592571728859136) AS send_is_int8send,
       snowflake_send('250592571728859136') AS bytes;

--
-- Casts.  From bigint, integer and smallint: checked, on assignment or
-- explicitly.  To bigint: free, and implicit.
--
SELECT 250592571728859136::snowflake AS from_bigint, 7::snowflake AS from_integer,
       7::smallint::snowflake AS from_smallint, snowflake(250592571728859136) AS function_form;
SELECT (-1)::bigint::snowflake;
SELECT (-1)::snowflake;
SELECT (-1)::smallint::snowflake;
SELECT snowflake(-250592571728859136);
-- the cast to bigint only relabels the value: no function call in the plan
CREATE TABLE relabel (id snowflake);
EXPLAIN (VERBOSE, COSTS OFF) SELECT id::bigint + 1 FROM relabel;
DROP TABLE relabel;
-- bigint does not become a snowflake implicitly: a function of a snowflake
-- wants one (or an explicit cast); terse, since PostgreSQL 19 words the
-- hint of this error differently
CREATE FUNCTION pg_temp.takes_snowflake(id snowflake) RETURNS text
LANGUAGE sql IMMUTABLE AS 'SELECT id::text';
\set VERBOSITY terse
SELECT pg_temp.takes_snowflake(250592571728859136::bigint);
\set VERBOSITY default
SELECT pg_temp.takes_snowflake(250592571728859136::bigint::snowflake) AS explicit,
       pg_temp.takes_snowflake('250592571728859136') AS literal;

--
-- As a key: every way in refuses a negative number.
--
CREATE TABLE orders (
    id snowflake PRIMARY KEY DEFAULT snowflake_nextval(),
    note text
);
SELECT format_type(atttypid, atttypmod) AS type, pg_get_expr(adbin, adrelid) AS "default"
  FROM pg_attribute JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
 WHERE attrelid = 'orders'::regclass AND attname = 'id';
-- the default, a bigint function, goes through the assignment cast
WITH made AS (INSERT INTO orders (note) VALUES ('made') RETURNING id)
SELECT pg_typeof(id), (snowflake_parse(id)).worker_id,
       snowflake_to_timestamptz(id) > now() - interval '1 minute' AS made_now
  FROM made;
-- bigint, integer and text values, and parameters of each
INSERT INTO orders VALUES (250592571728859136, 'bigint literal'), (1, 'integer literal'),
                          ('250592571728859137', 'text literal');
PREPARE put_bigint(bigint, text) AS INSERT INTO orders VALUES ($1, $2);
EXECUTE put_bigint(250592571728859138, 'bigint parameter');
PREPARE put_text(text, text) AS INSERT INTO orders VALUES ($1::snowflake, $2);
EXECUTE put_text('250592571728859139', 'text parameter');
PREPARE put_unknown AS INSERT INTO orders VALUES ($1, $2);
EXECUTE put_unknown('250592571728859140', 'untyped parameter');
COPY orders FROM STDIN;
250592571728859141	copied
\.
INSERT INTO orders SELECT 250592571728859142, 'insert select' ON CONFLICT (id) DO NOTHING;
INSERT INTO orders VALUES (250592571728859142, 'conflict') ON CONFLICT (id) DO NOTHING;
-- ... and negative numbers, each way
INSERT INTO orders VALUES (-1, 'negative integer');
INSERT INTO orders VALUES (-250592571728859136, 'negative bigint');
INSERT INTO orders VALUES ('-2', 'negative text');
EXECUTE put_bigint(-3, 'negative parameter');
EXECUTE put_unknown('-4', 'negative untyped parameter');
COPY orders FROM STDIN;
-5	negative copied
\.
INSERT INTO orders SELECT g, 'negative insert select' FROM generate_series(-6, -6) g;
UPDATE orders SET id = id - 250592571728859137 WHERE note = 'bigint literal';
DEALLOCATE put_bigint;
DEALLOCATE put_text;
DEALLOCATE put_unknown;
SELECT id, note FROM orders WHERE note <> 'made' ORDER BY id;

--
-- JSON: the exact decimal digits as a string, from every function that
-- turns SQL values into JSON; a bigint is a number there.
--
SELECT to_json(id) AS to_json, to_jsonb(id) AS to_jsonb,
       json_build_object('id', id) AS json_build_object,
       jsonb_build_object('id', id) AS jsonb_build_object
  FROM orders WHERE id = 250592571728859136;
SELECT row_to_json(o) AS row_to_json FROM orders o WHERE id = 250592571728859136;
SELECT json_agg(id ORDER BY id) AS json_agg, jsonb_agg(id ORDER BY id) AS jsonb_agg,
       json_object_agg(note, id ORDER BY id) AS json_object_agg
  FROM orders WHERE id BETWEEN 250592571728859136 AND 250592571728859137;
SELECT array_to_json(array_agg(id ORDER BY id)) AS array_to_json
  FROM orders WHERE id BETWEEN 250592571728859136 AND 250592571728859137;
-- PostgREST's query shape, over the table and over the same rows keyed by
-- bigint: strings there, numbers here
SELECT coalesce(json_agg(_postgrest_t), '[]') AS snowflake_key
  FROM (SELECT id, note FROM orders
         WHERE id BETWEEN 250592571728859136 AND 250592571728859137 ORDER BY id) _postgrest_t;
CREATE TABLE orders_bigint AS SELECT id::bigint AS id, note FROM orders;
SELECT coalesce(json_agg(_postgrest_t), '[]') AS bigint_key
  FROM (SELECT id, note FROM orders_bigint
         WHERE id BETWEEN 250592571728859136 AND 250592571728859137 ORDER BY id) _postgrest_t;
-- JSON in: a string or a number becomes a snowflake through its input
-- function, which refuses a negative one
SELECT * FROM json_populate_record(NULL::orders, '{"id": "250592571728859136", "note": "string"}');
SELECT * FROM jsonb_populate_record(NULL::orders, '{"id": 250592571728859136, "note": "number"}');
SELECT * FROM json_populate_record(NULL::orders, '{"id": "-1", "note": "negative"}');
-- arithmetic and aggregates are bigint's, so numbers again; a cast makes
-- a string of them
SELECT pg_typeof(max(id)) AS max_type, to_json(max(id)) AS max,
       to_json(max(id)::snowflake) AS max_as_snowflake, to_json(min(id) + 1) AS min_plus_1
  FROM orders WHERE id BETWEEN 250592571728859136 AND 250592571728859137;
-- mixed with bigint, CASE, COALESCE and UNION resolve to bigint (both are
-- numeric types; the implicit cast goes from snowflake to bigint only)
SELECT pg_typeof(coalesce(o.id, b.id)) AS "coalesce",
       pg_typeof(CASE WHEN o.id > 0 THEN o.id ELSE b.id END) AS "case",
       pg_typeof(coalesce(b.id, o.id)) AS coalesce_other_order
  FROM orders o JOIN orders_bigint b USING (note) WHERE o.id = 1;
SELECT pg_typeof(id), count(*) FROM (SELECT id FROM orders UNION SELECT id FROM orders_bigint) u
 GROUP BY 1;
SELECT pg_typeof(id), count(*) FROM (SELECT id FROM orders UNION SELECT id FROM orders) u
 GROUP BY 1;
DROP TABLE orders_bigint;
DROP TABLE orders;

--
-- Like the bigint key it replaces: the same indexes, plans and results.
-- Plans are printed alike on every major: plan() leaves out the
-- "Disabled: true" that PostgreSQL 18 and later print under a node an
-- enable_* setting discourages.
--
CREATE FUNCTION pg_temp.plan(query text) RETURNS SETOF text
LANGUAGE plpgsql AS $f$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        CONTINUE WHEN line ~ '^\s*Disabled: true$';
        RETURN NEXT line;
    END LOOP;
END
$f$;

CREATE TABLE events (id snowflake PRIMARY KEY, payload text);
INSERT INTO events
SELECT snowflake_compose('2025-01-01 00:00:00+00'::timestamptz + g * interval '1 minute', 1, g % 4096), 'e' || g
  FROM generate_series(0, 99999) g;
CREATE TABLE events_bigint (id bigint PRIMARY KEY, payload text);
INSERT INTO events_bigint SELECT * FROM events;
ANALYZE events, events_bigint;
-- the primary key's index uses bigint's operator class
SELECT indexrelid::regclass AS index, opc.opcname AS operator_class, am.amname AS method
  FROM pg_index i JOIN pg_opclass opc ON opc.oid = i.indclass[0]
  JOIN pg_am am ON am.oid = opc.opcmethod
 WHERE indrelid = 'events'::regclass;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET max_parallel_workers_per_gather = 0;

SELECT snowflake_compose('2025-02-01 00:00:00+00', 1, 44640 % 4096) AS feb1 \gset
-- equality with a bigint literal, an integer literal, a text literal, and
-- bigint, untyped and bigint[] parameters (generic plans): each is
-- bigint's operator on the primary key's index
SELECT * FROM pg_temp.plan('SELECT * FROM events WHERE id = 250592571728859136');
SELECT * FROM pg_temp.plan('SELECT * FROM events WHERE id = 42');
SELECT * FROM pg_temp.plan($$SELECT * FROM events WHERE id = '250592571728859136'$$);
SET plan_cache_mode = force_generic_plan;
PREPARE by_bigint(bigint) AS SELECT payload FROM events WHERE id = $1;
SELECT * FROM pg_temp.plan('EXECUTE by_bigint(' || :feb1 || ')');
EXECUTE by_bigint(:feb1);
PREPARE by_untyped AS SELECT payload FROM events WHERE id = $1;
SELECT parameter_types FROM pg_prepared_statements WHERE name = 'by_untyped';
SELECT * FROM pg_temp.plan('EXECUTE by_untyped(''' || :feb1 || ''')');
EXECUTE by_untyped(:'feb1');
PREPARE by_array(bigint[]) AS SELECT count(*) FROM events WHERE id = ANY ($1);
SELECT * FROM pg_temp.plan('EXECUTE by_array(ARRAY[' || :feb1 || ', 1])');
EXECUTE by_array(ARRAY[:feb1, 1]);
PREPARE by_snowflake_array(snowflake[]) AS SELECT count(*) FROM events WHERE id = ANY ($1);
SELECT * FROM pg_temp.plan('EXECUTE by_snowflake_array(ARRAY[' || :feb1 || ', 1])');
EXECUTE by_snowflake_array(ARRAY[:feb1, 1]);
RESET plan_cache_mode;
DEALLOCATE by_bigint;
DEALLOCATE by_untyped;
DEALLOCATE by_array;
DEALLOCATE by_snowflake_array;
-- a range, and keyset paging: the index, in ID order
SELECT * FROM pg_temp.plan('SELECT * FROM events WHERE id BETWEEN ' || :feb1 || ' AND '
                           || :feb1 || ' + 10000000000 ORDER BY id');
SELECT count(*) FROM events WHERE id BETWEEN :feb1 AND :feb1 + 10000000000;
SELECT * FROM pg_temp.plan('SELECT * FROM events WHERE id > ' || :feb1 || ' ORDER BY id LIMIT 3');
SELECT id, payload FROM events WHERE id > :feb1 ORDER BY id LIMIT 3;
-- <@ is rewritten into bigint comparisons on the column: an index range
-- scan, with constant bounds or bounds computed when the scan starts
SELECT * FROM pg_temp.plan($$
SELECT * FROM events WHERE id <@ tstzrange('2025-02-01 00:00:00+00', '2025-02-02 00:00:00+00')$$);
SELECT count(*) FROM events WHERE id <@ tstzrange('2025-02-01 00:00:00+00', '2025-02-02 00:00:00+00');
SELECT * FROM pg_temp.plan($$
SELECT * FROM events WHERE id <@ tstzrange(now() - interval '1 hour', now())$$);
-- the parts, time and text form take it through the cast
SELECT id, snowflake_parse(id), snowflake_to_timestamptz(id), snowflake_encode(id)
  FROM events WHERE id = :feb1;
-- ordering, and min and max read from the index's ends
SELECT * FROM pg_temp.plan('SELECT id FROM events ORDER BY id');
SELECT (SELECT array_agg(id)::bigint[] FROM (SELECT id FROM events ORDER BY id DESC LIMIT 5) s)
     = (SELECT array_agg(id) FROM (SELECT id FROM events_bigint ORDER BY id DESC LIMIT 5) s)
       AS same_order;
SELECT (SELECT min(id) FROM events) = (SELECT min(id) FROM events_bigint) AS same_min,
       (SELECT max(id) FROM events) = (SELECT max(id) FROM events_bigint) AS same_max,
       (SELECT count(*) FROM pg_temp.plan('SELECT max(id) FROM events') l
         WHERE l ~ 'Index Only Scan Backward using events_pkey') AS max_from_index;
RESET enable_seqscan;
RESET enable_bitmapscan;
-- DISTINCT and GROUP BY, sorted and hashed, on a column with no index
CREATE TABLE seen (id snowflake);
INSERT INTO seen SELECT id FROM events, generate_series(1, 2) WHERE payload LIKE 'e1%';
ANALYZE seen;
SET enable_hashagg = off;
SELECT * FROM pg_temp.plan('SELECT DISTINCT id FROM seen');
SELECT count(*) FROM (SELECT DISTINCT id FROM seen) s;
RESET enable_hashagg;
SET enable_sort = off;
SELECT * FROM pg_temp.plan('SELECT id, count(*) FROM seen GROUP BY id');
SELECT count(*), min(n), max(n) FROM (SELECT id, count(*) AS n FROM seen GROUP BY id) s;
RESET enable_sort;
DROP TABLE seen;

-- joins with a bigint key: hash and merge joins on bigint's =
SET enable_nestloop = off;
SET enable_mergejoin = off;
SELECT * FROM pg_temp.plan('SELECT count(*) FROM events e JOIN events_bigint b ON e.id = b.id');
SELECT count(*) FROM events e JOIN events_bigint b ON e.id = b.id;
RESET enable_mergejoin;
SET enable_hashjoin = off;
SELECT * FROM pg_temp.plan('SELECT count(*) FROM events e JOIN events_bigint b ON e.id = b.id');
SELECT count(*) FROM events e JOIN events_bigint b ON e.id = b.id;
RESET enable_hashjoin;
RESET enable_nestloop;

-- foreign keys both ways: a snowflake column referencing a bigint key, and
-- a bigint column referencing a snowflake key
CREATE TABLE comments_s (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(),
                         event_id snowflake REFERENCES events_bigint);
CREATE TABLE comments_b (id bigint PRIMARY KEY, event_id bigint REFERENCES events);
INSERT INTO comments_s (event_id) VALUES (:feb1);
INSERT INTO comments_b VALUES (1, :feb1);
INSERT INTO comments_s (event_id) VALUES (:feb1 + 1);
INSERT INTO comments_b VALUES (2, :feb1 + 1);
DELETE FROM events_bigint WHERE id = :feb1;
DELETE FROM events WHERE id = :feb1;
SELECT count(*) AS joined FROM comments_s c JOIN events_bigint e ON e.id = c.event_id;
DROP TABLE comments_s, comments_b;

-- partitioning by range: bounds from bigint expressions, rows routed, and
-- partitions pruned by bigint comparisons and by <@
CREATE TABLE events_by_month (id snowflake PRIMARY KEY, payload text) PARTITION BY RANGE (id);
CREATE TABLE events_2025_01 PARTITION OF events_by_month
    FOR VALUES FROM (snowflake_min_id('2025-01-01 00:00:00+00'))
                 TO (snowflake_min_id('2025-02-01 00:00:00+00'));
CREATE TABLE events_2025_02 PARTITION OF events_by_month
    FOR VALUES FROM (snowflake_min_id('2025-02-01 00:00:00+00'))
                 TO (snowflake_min_id('2025-03-01 00:00:00+00'));
CREATE TABLE events_later PARTITION OF events_by_month
    FOR VALUES FROM (snowflake_min_id('2025-03-01 00:00:00+00')) TO (MAXVALUE);
CREATE TABLE events_negative PARTITION OF events_by_month FOR VALUES FROM (-10) TO (0);
INSERT INTO events_by_month SELECT * FROM events;
ANALYZE events_by_month;
SELECT tableoid::regclass AS partition, count(*),
       min(snowflake_to_timestamptz(id)), max(snowflake_to_timestamptz(id))
  FROM events_by_month GROUP BY 1 ORDER BY 1;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT * FROM pg_temp.plan('SELECT count(*) FROM events_by_month WHERE id >= ' || :feb1
                           || ' AND id < ' || :feb1 || ' + 10000000000');
SELECT * FROM pg_temp.plan($$
SELECT count(*) FROM events_by_month
 WHERE id <@ tstzrange('2025-02-01 00:00:00+00', '2025-02-02 00:00:00+00')$$);
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET max_parallel_workers_per_gather;
DROP TABLE events_by_month;
DROP TABLE events_bigint;
DROP TABLE events;

--
-- A table or type named snowflake in the extension's schema stops CREATE
-- EXTENSION and the update to 1.4 with a hint; renamed, it makes way.
--
SELECT current_database() AS regress_db \gset
CREATE DATABASE regression_snowflake_type_name;
\c regression_snowflake_type_name
\set SHOW_CONTEXT never
CREATE TABLE snowflake (id bigint);
CREATE EXTENSION snowflake;
CREATE EXTENSION snowflake VERSION '1.3';
ALTER EXTENSION snowflake UPDATE TO '1.4';
ALTER TABLE snowflake RENAME TO snowflakes;
ALTER EXTENSION snowflake UPDATE TO '1.4';
SELECT to_json('250592571728859136'::snowflake) AS after_update;
-- a column of the type keeps the extension from being dropped (CASCADE
-- would drop the column); back to bigint, it lets it go
CREATE TABLE keyed (id snowflake PRIMARY KEY, note text);
INSERT INTO keyed VALUES (250592571728859136, 'kept');
DROP EXTENSION snowflake;
ALTER TABLE keyed ALTER COLUMN id TYPE bigint;
DROP EXTENSION snowflake;
SELECT * FROM keyed;
\c :regress_db
DROP DATABASE regression_snowflake_type_name;
