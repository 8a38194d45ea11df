--
-- The time-range operator, id <@ tstzrange: true when the instant the ID
-- stands for lies in the range.  The planner rewrites it into
-- "id >= lo AND id <= hi", with constant bounds for a constant range and
-- snowflake_range_min_id/max_id calls otherwise; the function itself runs
-- only when the rewrite is not possible (a volatile argument).  All three
-- must agree with the definition, r @> snowflake_to_timestamptz(id).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';

-- IDs at, just below and just above two bounds one second apart
CREATE TEMP TABLE probe (label text, id bigint);
INSERT INTO probe VALUES
    ('last ID before t1',  snowflake_min_id('2025-03-01 00:00:00+00') - 1),
    ('first ID at t1',     snowflake_min_id('2025-03-01 00:00:00+00')),
    ('last ID at t1',      snowflake_max_id('2025-03-01 00:00:00+00')),
    ('first ID after t1',  snowflake_max_id('2025-03-01 00:00:00+00') + 1),
    ('last ID before t2',  snowflake_min_id('2025-03-01 00:00:01+00') - 1),
    ('first ID at t2',     snowflake_min_id('2025-03-01 00:00:01+00')),
    ('last ID at t2',      snowflake_max_id('2025-03-01 00:00:01+00')),
    ('first ID after t2',  snowflake_max_id('2025-03-01 00:00:01+00') + 1);

-- constant ranges: the bounds are folded at plan time
SELECT label, snowflake_to_timestamptz(id) AS created_at,
       id <@ tstzrange('2025-03-01 00:00:00+00', '2025-03-01 00:00:01+00', '[]') AS "[t1,t2]",
       id <@ tstzrange('2025-03-01 00:00:00+00', '2025-03-01 00:00:01+00', '[)') AS "[t1,t2)",
       id <@ tstzrange('2025-03-01 00:00:00+00', '2025-03-01 00:00:01+00', '(]') AS "(t1,t2]",
       id <@ tstzrange('2025-03-01 00:00:00+00', '2025-03-01 00:00:01+00', '()') AS "(t1,t2)"
  FROM probe ORDER BY id;

-- bounds inside a millisecond: the ID of that millisecond was created
-- before the bound, so it is out on the lower side and in on the upper
-- side, whichever way the bound is closed
SELECT label, snowflake_to_timestamptz(id) AS created_at,
       id <@ tstzrange('2025-03-01 00:00:00.0005+00', '2025-03-01 00:00:01.0005+00', '[]') AS "[]",
       id <@ tstzrange('2025-03-01 00:00:00.0005+00', '2025-03-01 00:00:01.0005+00', '[)') AS "[)",
       id <@ tstzrange('2025-03-01 00:00:00.0005+00', '2025-03-01 00:00:01.0005+00', '(]') AS "(]",
       id <@ tstzrange('2025-03-01 00:00:00.0005+00', '2025-03-01 00:00:01.0005+00', '()') AS "()"
  FROM probe ORDER BY id;

-- the ID interval of various ranges, clamped to the lifetime
-- (2025-01-01 00:00:00 through 2094-09-07 15:47:35.551); an impossible
-- range gives 0 and -1
SELECT r, snowflake_range_min_id(r) AS min_id, snowflake_range_max_id(r) AS max_id
  FROM (VALUES ('(,)'::tstzrange),
               ('[-infinity,infinity]'),
               ('[2025-03-01 00:00:00+00,)'),
               ('(2025-03-01 00:00:00+00,)'),
               ('(,2025-03-01 00:00:00+00]'),
               ('(,2025-03-01 00:00:00+00)'),
               ('[2025-03-01 00:00:00+00,2025-03-01 00:00:00+00]'),     -- one millisecond
               ('[2025-03-01 00:00:00.0005+00,2025-03-01 00:00:00.0005+00]'), -- no ID's instant
               ('(2025-03-01 00:00:00.0001+00,2025-03-01 00:00:00.0009+00)'),
               ('[2000-01-01 00:00:00+00,2025-01-01 00:00:00+00)'),     -- before the epoch
               ('[2000-01-01 00:00:00+00,2025-01-01 00:00:00+00]'),     -- ... and its first ms
               ('[2094-09-07 15:47:35.551+00,2200-01-01 00:00:00+00)'), -- last ms and beyond
               ('(2094-09-07 15:47:35.551+00,infinity)'),               -- after the lifetime
               ('[infinity,infinity]'),
               ('[-infinity,-infinity]'),
               ('empty')) v(r)
 ORDER BY min_id, max_id, r;

-- every probe (plus the first and last IDs and a negative number) against
-- these ranges and the ones above: the rewrite with function bounds (the
-- range is a column here), the function itself (a volatile argument
-- prevents the rewrite) and the definition all agree
CREATE TEMP TABLE ranges (r tstzrange);
INSERT INTO ranges VALUES
    ('(,)'), ('[-infinity,infinity]'), ('[2025-03-01 00:00:00+00,)'),
    ('(2025-03-01 00:00:00+00,)'), ('(,2025-03-01 00:00:00+00]'),
    ('(,2025-03-01 00:00:00+00)'),
    ('[2025-03-01 00:00:00+00,2025-03-01 00:00:00+00]'),
    ('[2025-03-01 00:00:00.0005+00,2025-03-01 00:00:00.0005+00]'),
    ('(2025-03-01 00:00:00.0001+00,2025-03-01 00:00:00.0009+00)'),
    ('[2000-01-01 00:00:00+00,2025-01-01 00:00:00+00)'),
    ('[2000-01-01 00:00:00+00,2025-01-01 00:00:00+00]'),
    ('[2094-09-07 15:47:35.551+00,2200-01-01 00:00:00+00)'),
    ('(2094-09-07 15:47:35.551+00,infinity)'),
    ('[infinity,infinity]'), ('[-infinity,-infinity]'), ('empty'),
    ('[2025-03-01 00:00:00+00,2025-03-01 00:00:01+00]'),
    ('[2025-03-01 00:00:00+00,2025-03-01 00:00:01+00)'),
    ('(2025-03-01 00:00:00+00,2025-03-01 00:00:01+00]'),
    ('(2025-03-01 00:00:00+00,2025-03-01 00:00:01+00)'),
    ('[2025-03-01 00:00:00.0005+00,2025-03-01 00:00:01.0005+00]'),
    ('(2025-03-01 00:00:00.0005+00,2025-03-01 00:00:01.0005+00)');
INSERT INTO probe VALUES ('first ID', 0), ('last ID', 9223372036854775807),
                         ('not an ID', -1);
SELECT count(*) AS cases,
       count(*) FILTER (WHERE (p.id <@ q.r) IS DISTINCT FROM
                              snowflake_in_range(p.id + (0 * random())::bigint, q.r)) AS rewrite_differs,
       count(*) FILTER (WHERE p.id >= 0 AND (p.id <@ q.r) IS DISTINCT FROM
                              (q.r @> snowflake_to_timestamptz(p.id))) AS definition_differs,
       count(*) FILTER (WHERE p.id < 0 AND p.id <@ q.r) AS negative_inside
  FROM probe p, ranges q;

-- a literal range needs no cast; NULL in, NULL out
SELECT snowflake_min_id('2025-03-01 00:00:00+00') <@ '[2025-03-01 00:00:00+00,2025-03-02 00:00:00+00)' AS literal,
       (snowflake_min_id('2025-03-01 00:00:00+00') <@ NULL::tstzrange) IS NULL AS null_range,
       (NULL::bigint <@ '[2025-03-01 00:00:00+00,2025-03-02 00:00:00+00)'::tstzrange) IS NULL AS null_id,
       (SELECT (id <@ 'empty'::tstzrange) IS NULL FROM (VALUES (NULL::bigint)) v(id)) AS null_id_empty_range;

-- the planner turns the operator into a primary-key range scan
CREATE TABLE events (id bigint PRIMARY KEY, payload text);
INSERT INTO events
SELECT snowflake_compose('2025-01-01 00:00:00+00'::timestamptz + g * interval '1 minute', 1, g % 4096), 'e' || g
  FROM generate_series(0, 99999) g;
ANALYZE events;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

-- EXPLAIN (COSTS OFF), printed the same on every major: PostgreSQL 17
-- names an initplan's result "(InitPlan 1).col1" where 15 and 16 print
-- "$0" (and "InitPlan 1 (returns $0)"), 18 adds "Disabled: true" under a
-- node that an enable_* setting above discourages, and 19 calls subplans
-- "InitPlan expr_1" and "SubPlan expr_1".  Plans are printed as 17 prints
-- them.
CREATE FUNCTION explain_plan(query text) RETURNS TABLE ("QUERY PLAN" text)
LANGUAGE plpgsql AS $f$
DECLARE
	plan	text[] := '{}';
	line	text;
	m		text[];
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		CONTINUE WHEN line ~ '^\s*Disabled: true$';
		plan := plan || regexp_replace(line, '(InitPlan|SubPlan) expr_(\d+)', '\1 \2', 'g');
	END LOOP;
	FOR m IN SELECT regexp_matches(array_to_string(plan, E'\n'), 'InitPlan (\d+) \(returns \$(\d+)\)', 'g')
	LOOP
		plan := ARRAY(SELECT regexp_replace(regexp_replace(l, 'InitPlan ' || m[1] || ' \(returns \$' || m[2] || '\)',
															   'InitPlan ' || m[1]),
											'\$' || m[2] || '(?!\d)', '(InitPlan ' || m[1] || ').col1', 'g')
					    FROM unnest(plan) WITH ORDINALITY AS u(l, n) ORDER BY n);
	END LOOP;
	RETURN QUERY SELECT l FROM unnest(plan) WITH ORDINALITY AS u(l, n) ORDER BY n;
END
$f$;

-- a constant range: constant bounds
SELECT * FROM explain_plan($$
SELECT * FROM events WHERE id <@ tstzrange('2025-02-01 00:00:00+00', '2025-02-02 00:00:00+00')$$);
SELECT count(*) FROM events WHERE id <@ tstzrange('2025-02-01 00:00:00+00', '2025-02-02 00:00:00+00');
SELECT count(*) FROM events WHERE id <@ tstzrange('2025-02-01 00:00:00+00', '2025-02-02 00:00:00+00', '[]');

-- the function form is rewritten the same way
SELECT * FROM explain_plan($$
SELECT * FROM events WHERE snowflake_in_range(id, tstzrange('2025-02-01 00:00:00+00', '2025-02-02 00:00:00+00', '(]'))$$);

-- an empty range (or one outside the lifetime) matches nothing
SELECT * FROM explain_plan($$
SELECT * FROM events WHERE id <@ tstzrange('2020-01-01 00:00:00+00', '2021-01-01 00:00:00+00')$$);
SELECT count(*) FROM events WHERE id <@ tstzrange('2020-01-01 00:00:00+00', '2021-01-01 00:00:00+00');

-- a range computed at run time, such as "the last hour": the bounds are
-- computed once, when the scan starts
SELECT * FROM explain_plan($$
SELECT * FROM events WHERE id <@ tstzrange(now() - interval '1 hour', now())$$);
SELECT * FROM explain_plan($$
SELECT * FROM events
 WHERE id <@ tstzrange('2025-02-01 00:00:00+00', '2025-02-01 00:00:00+00'::timestamptz + interval '1 hour')$$);
SELECT count(*) FROM events
 WHERE id <@ tstzrange('2025-02-01 00:00:00+00', '2025-02-01 00:00:00+00'::timestamptz + interval '1 hour');

-- a parameter, in a generic plan
PREPARE in_range(tstzrange) AS SELECT count(*) FROM events WHERE id <@ $1;
SET plan_cache_mode = force_generic_plan;
SELECT * FROM explain_plan($$EXECUTE in_range('[2025-02-01 00:00:00+00,2025-02-01 01:00:00+00)')$$);
EXECUTE in_range('[2025-02-01 00:00:00+00,2025-02-01 01:00:00+00)');
EXECUTE in_range('[2025-02-01 00:00:00+00,2025-02-01 01:00:00+00]');
RESET plan_cache_mode;
DEALLOCATE in_range;

-- keyset paging within a time window: each page starts after the last ID
-- of the one before
SELECT id, snowflake_to_timestamptz(id) AS created_at, payload FROM events
 WHERE id <@ tstzrange('2025-02-01 00:00:00+00', '2025-02-02 00:00:00+00')
 ORDER BY id LIMIT 3;
SELECT max(id) AS last_id FROM (
    SELECT id FROM events
     WHERE id <@ tstzrange('2025-02-01 00:00:00+00', '2025-02-02 00:00:00+00')
     ORDER BY id LIMIT 3) page \gset
SELECT id, snowflake_to_timestamptz(id) AS created_at, payload FROM events
 WHERE id <@ tstzrange('2025-02-01 00:00:00+00', '2025-02-02 00:00:00+00')
   AND id > :last_id
 ORDER BY id LIMIT 3;

-- a volatile range cannot be rewritten: the operator is evaluated per row
SELECT * FROM explain_plan($$
SELECT * FROM events WHERE id <@ tstzrange(clock_timestamp() - interval '1 hour', clock_timestamp())$$);

-- ... unless it is an uncorrelated sub-select: the rewrite declines (the
-- sub-select is volatile), the sub-select becomes an initplan, evaluated
-- once, and the index-condition support derives both bounds from its result
SELECT * FROM explain_plan($$
SELECT * FROM events WHERE id <@ (SELECT tstzrange(clock_timestamp() - interval '1 hour', NULL))$$);
SELECT * FROM explain_plan($$
SELECT * FROM events
 WHERE id <@ (SELECT tstzrange('2025-02-01 00:00:00+00', '2025-02-01 01:00:00+00') WHERE random() >= 0)$$);
SELECT count(*) FROM events
 WHERE id <@ (SELECT tstzrange('2025-02-01 00:00:00+00', '2025-02-01 01:00:00+00') WHERE random() >= 0);

-- ... but not a correlated one: it stays a SubPlan, which two index bounds
-- would each evaluate (with a volatile sub-select, possibly to different
-- ranges), so the operator filters the joined rows instead
CREATE TEMP TABLE starts (s timestamptz);
INSERT INTO starts VALUES ('2025-02-01 00:00:00+00'), ('2025-02-03 00:00:00+00');
CREATE TEMP VIEW hour_after_start AS
SELECT s, id FROM starts JOIN events
    ON id <@ (SELECT tstzrange(s, s + interval '1 hour') WHERE random() >= 0);
SELECT * FROM explain_plan($$SELECT * FROM hour_after_start$$);
SELECT s, count(*) AS ids, min(snowflake_to_timestamptz(id)) AS first,
       max(snowflake_to_timestamptz(id)) AS last
  FROM hour_after_start GROUP BY s ORDER BY s;
DROP VIEW hour_after_start;

-- a stable sub-select is not copied into both bounds either: each copy would
-- run on its own, and a LIMIT without ORDER BY could take the bounds from
-- different rows.  The same as above follows: uncorrelated, it becomes one
-- initplan that the index condition uses; correlated, the operator filters.
-- So does a sub-select on the ID side.
CREATE TEMP TABLE lengths (len interval);
INSERT INTO lengths VALUES ('1 hour'), ('2 hours');
-- uncorrelated
SELECT * FROM explain_plan($q$
SELECT * FROM events
 WHERE id <@ (SELECT tstzrange(min(s), min(s) + interval '1 hour') FROM starts)
$q$);
SELECT count(*) FROM events
 WHERE id <@ (SELECT tstzrange(min(s), min(s) + interval '1 hour') FROM starts);
-- correlated
CREATE TEMP VIEW after_start AS
SELECT s, id FROM starts JOIN events
    ON id <@ (SELECT tstzrange(s, s + len) FROM lengths LIMIT 1);
-- (its conditions only: majors join the two tables in different orders)
SELECT * FROM explain_plan('SELECT * FROM after_start')
 WHERE "QUERY PLAN" ~ '(Cond|Filter):';
SELECT s, count(*) AS ids FROM after_start GROUP BY s ORDER BY s;
DROP VIEW after_start;
-- on the ID side
SELECT * FROM explain_plan($q$
SELECT s FROM starts
 WHERE (SELECT id FROM probe WHERE label = 'first ID at t1') <@ tstzrange(s, s + interval '28 days')
$q$);
SELECT s FROM starts
 WHERE (SELECT id FROM probe WHERE label = 'first ID at t1') <@ tstzrange(s, s + interval '28 days')
 ORDER BY s;
DROP TABLE lengths;
DROP TABLE starts;

RESET enable_seqscan;
RESET enable_bitmapscan;
DROP FUNCTION explain_plan(text);
DROP TABLE events;
