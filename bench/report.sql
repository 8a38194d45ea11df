-- bench/report.sql - the markdown report of bench/run.sh, from the medians
-- in the view med (bench/setup.sql).  Run with psql -At and the variables
-- n (IDs per bulk statement), insert_rows (rows per INSERT ... SELECT) and
-- burst (IDs per burst).

-- the layout's ceiling: 2^sequence_bits IDs per millisecond
SELECT (1000 * 2 ^ sequence_bits)::bigint AS ceiling FROM snowflake_stats \gset
-- whether PostgreSQL 18's uuidv7() was measured too
SELECT EXISTS (SELECT FROM med WHERE name = 'DEFAULT uuidv7()') AS has_uuidv7 \gset

-- one median
CREATE FUNCTION pg_temp.v(s text, nm text, c int, mt text) RETURNS float8
LANGUAGE sql STABLE AS $$
	SELECT value FROM med WHERE section = s AND name = nm AND clients = c AND metric = mt
$$;
-- a markdown table row
CREATE FUNCTION pg_temp.md(variadic cells text[]) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT '| ' || array_to_string(cells, ' | ', '') || ' |' $$;
-- how far apart the repetitions of a pgbench section were: max - min over
-- the repetitions, relative to their median, for each function and client
-- count; the median of those
CREATE FUNCTION pg_temp.spread(sec text) RETURNS text
LANGUAGE sql STABLE AS $$
	SELECT round(100 * percentile_cont(0.5) WITHIN GROUP (ORDER BY d))::text || ' %'
	  FROM (SELECT (max(value) - min(value)) / percentile_cont(0.5) WITHIN GROUP (ORDER BY value) AS d
	          FROM results WHERE section = sec GROUP BY name, clients) s
$$;
-- the ratios of two competitors' medians at each client count, summed up
-- as their geometric mean and their lowest
CREATE FUNCTION pg_temp.ratios(sec text, a text, b text, OUT overall float8, OUT lowest float8)
LANGUAGE sql STABLE AS $$
	SELECT exp(avg(ln(x.value / y.value))), min(x.value / y.value)
	  FROM med x JOIN med y USING (section, clients, metric)
	 WHERE section = sec AND x.name = a AND y.name = b
$$;
-- a number with thousands separators, and a ratio
CREATE FUNCTION pg_temp.num(x float8, digits int DEFAULT 0) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN digits = 0 THEN to_char(round(x), 'FM999,999,999,990')
	            ELSE to_char(round(x::numeric, digits), 'FM999,999,999,990.' || repeat('0', digits)) END
$$;
CREATE FUNCTION pg_temp.x(x float8) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT to_char(round(x::numeric, 2), 'FM990.00') || 'x' $$;
-- a pgbench section as a markdown table: a row per competitor, a column per
-- client count
CREATE FUNCTION pg_temp.by_clients(sec text, what text) RETURNS SETOF text
LANGUAGE sql STABLE AS $$
	SELECT line FROM (
		SELECT 0 AS k, pg_temp.md(VARIADIC array[what] || array_agg(
				   c || CASE c WHEN 1 THEN ' client' ELSE ' clients' END ORDER BY c)) AS line
		  FROM (SELECT DISTINCT clients AS c FROM med WHERE section = sec) s
		UNION ALL
		SELECT 1, pg_temp.md(VARIADIC array['---'] || array_agg('---:'::text ORDER BY c))
		  FROM (SELECT DISTINCT clients AS c FROM med WHERE section = sec) s
		UNION ALL
		SELECT 2 + ord, pg_temp.md(VARIADIC array['`' || name || '`']
								   || array_agg(pg_temp.num(value) ORDER BY clients))
		  FROM med WHERE section = sec GROUP BY ord, name) t
	 ORDER BY k
$$;
-- a row of that table: competitor a's results over b's, at each client count
CREATE FUNCTION pg_temp.ratio_row(sec text, a text, b text, label text) RETURNS text
LANGUAGE sql STABLE AS $$
	SELECT pg_temp.md(VARIADIC array[label] || array_agg(pg_temp.x(x.value / y.value) ORDER BY x.clients))
	  FROM med x JOIN med y USING (section, clients, metric)
	 WHERE section = sec AND x.name = a AND y.name = b
$$;

\echo '## 1. Bulk generation: `SELECT count(f()) FROM generate_series(1, N)`'
\echo
\echo 'Time for N IDs in one statement; "vs nextval()" is how many times faster than `nextval()` without a cache (above 1: faster). The ceiling is 2^sequence_bits IDs per millisecond; a burst can pass it by borrowing milliseconds ahead of the clock (within `snowflake.max_borrow`).'
\echo
SELECT pg_temp.md('function', 'ms', 'ns per ID', 'IDs per second', 'vs nextval()', 'share of the ceiling');
SELECT pg_temp.md('---', '---:', '---:', '---:', '---:', '---:');
SELECT pg_temp.md('`' || name || '`', pg_temp.num(value, 1), pg_temp.num(value * 1e6 / :n, 1),
                   pg_temp.num(:n / value * 1000),
                   pg_temp.x(pg_temp.v('bulk', 'nextval(), no cache', 1, 'ms') / value),
                   CASE WHEN name LIKE 'snowflake%'
                        THEN pg_temp.num(100 * (:n / value * 1000) / :ceiling) || ' %' END)
  FROM med WHERE section = 'bulk' ORDER BY ord;
\echo

\echo '## 2. `pgbench -M prepared`, `SELECT f()`: transactions per second'
\echo
SELECT pg_temp.by_clients('select', 'function');
SELECT pg_temp.ratio_row('select', 'snowflake_nextval()', 'nextval(), no cache',
                         'snowflake_nextval() / nextval(), no cache');
\echo
SELECT format('Run-to-run spread (max - min of the repetitions over their median, the median over all cells): %s. Differences smaller than that are noise.', pg_temp.spread('select'));
\echo

\echo '## 3. Inserts'
\echo
\echo 'Bulk load first: `INSERT INTO t (v) SELECT i FROM generate_series(1, M) AS i` into an empty `t (id <key> PRIMARY KEY, v int)`, repeated; the last load stays.'
\echo
SELECT pg_temp.md('key', 'ms', 'rows per second', 'vs bigserial', 'table size', 'index size', 'index vs bigserial');
SELECT pg_temp.md('---', '---:', '---:', '---:', '---:', '---:', '---:');
SELECT pg_temp.md('`' || name || '`', pg_temp.num(value), pg_temp.num(:insert_rows / value * 1000),
                   pg_temp.x(pg_temp.v('insert_select', 'bigserial', 1, 'ms') / value),
                   pg_size_pretty(pg_temp.v('insert_select_size', name, 0, 'table_bytes')::bigint),
                   pg_size_pretty(pg_temp.v('insert_select_size', name, 0, 'index_bytes')::bigint),
                   pg_temp.x(pg_temp.v('insert_select_size', name, 0, 'index_bytes')
                             / pg_temp.v('insert_select_size', 'bigserial', 0, 'index_bytes')))
  FROM med WHERE section = 'insert_select' ORDER BY ord;
\echo
SELECT format('(M = %s.)', pg_temp.num(:insert_rows));
\echo
\echo 'Then pgbench on top, one `INSERT INTO t (v) VALUES (1)` per transaction, with a `CHECKPOINT` before each run: transactions per second'
\echo
SELECT pg_temp.by_clients('insert', 'key');
SELECT pg_temp.ratio_row('insert', 'DEFAULT snowflake_nextval()', 'bigserial',
                         'snowflake / bigserial');
SELECT pg_temp.ratio_row('insert', 'DEFAULT snowflake_nextval()', 'DEFAULT gen_random_uuid()',
                         'snowflake / gen_random_uuid()');
\if :has_uuidv7
SELECT pg_temp.ratio_row('insert', 'DEFAULT snowflake_nextval()', 'DEFAULT uuidv7()',
                         'snowflake / uuidv7()');
\endif
\echo
SELECT format('Run-to-run spread: %s.', pg_temp.spread('insert'));
\echo
\echo 'Sizes at the end, after the bulk load and every single-row insert:'
\echo
SELECT pg_temp.md('key', 'rows', 'table bytes per row', 'index bytes per row', 'index per row vs bigserial');
SELECT pg_temp.md('---', '---:', '---:', '---:', '---:');
SELECT pg_temp.md('`' || name || '`',
                   pg_temp.num(pg_temp.v('insert_size', name, 0, 'rows')),
                   pg_temp.num(pg_temp.v('insert_size', name, 0, 'table_bytes') / pg_temp.v('insert_size', name, 0, 'rows'), 1),
                   pg_temp.num(pg_temp.v('insert_size', name, 0, 'index_bytes') / pg_temp.v('insert_size', name, 0, 'rows'), 1),
                   pg_temp.x((pg_temp.v('insert_size', name, 0, 'index_bytes') / pg_temp.v('insert_size', name, 0, 'rows'))
                             / (pg_temp.v('insert_size', 'bigserial', 0, 'index_bytes') / pg_temp.v('insert_size', 'bigserial', 0, 'rows'))))
  FROM med WHERE section = 'insert_size' AND metric = 'rows' ORDER BY ord;
\echo
\echo '## 4. Bursts above the ceiling'
\echo
\echo 'One statement asks for the burst, with `snowflake.max_wait = 10s` (past `snowflake.max_borrow` a burst waits for the clock); "drift" is how far the IDs ran ahead of the clock (`largest_drift_ms` in `snowflake_stats`); borrows are milliseconds taken ahead; a wait is a call that slept for the clock.'
\echo
SELECT pg_temp.md('burst', 'IDs', 'ms', 'IDs per second', 'share of the ceiling', 'largest drift, ms', 'borrows', 'waits', 'wait time, ms', 'marks written');
SELECT pg_temp.md('---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:');
SELECT pg_temp.md('`' || name || '`', pg_temp.num(b.ids), pg_temp.num(ms), pg_temp.num(b.ids / ms * 1000),
                   pg_temp.num(100 * (b.ids / ms * 1000) / :ceiling) || ' %',
                   pg_temp.num(pg_temp.v('burst', name, 1, 'largest_drift_ms')),
                   pg_temp.num(pg_temp.v('burst', name, 1, 'borrows')),
                   pg_temp.num(pg_temp.v('burst', name, 1, 'waits')),
                   pg_temp.num(pg_temp.v('burst', name, 1, 'wait_time_ms')),
                   pg_temp.num(pg_temp.v('burst', name, 1, 'marks_written')))
  FROM (SELECT ord, name, value AS ms FROM med WHERE section = 'burst' AND metric = 'ms') s,
       LATERAL (SELECT :burst::float8 AS ids) b
 ORDER BY ord;
\echo

\echo '## 5. Instructions per ID (callgrind, inclusive of everything the function calls)'
\echo
SELECT pg_temp.md('call', 'instructions per ID', 'vs nextval(), no cache');
SELECT pg_temp.md('---', '---:', '---:');
SELECT pg_temp.md('`' || name || '`', pg_temp.num(value),
                   pg_temp.x(pg_temp.v('callgrind', 'nextval(), no cache', 1, 'instructions') / value))
  FROM med WHERE section = 'callgrind' ORDER BY ord;
\echo
SELECT format('Of `snowflake_nextval()`''s %s instructions, %s are the generator''s LWLock (acquire and release).',
              pg_temp.num(pg_temp.v('callgrind', 'snowflake_nextval()', 1, 'instructions')),
              pg_temp.num(value))
  FROM med WHERE section = 'callgrind_lock';
\echo

\echo '## Targets'
\echo
SELECT pg_temp.md('target', 'measured', 'met');
SELECT pg_temp.md('---', '---', '---');
WITH t(ord, target, measured, met) AS (
	SELECT 1, 'bulk `snowflake_nextval()` at least as fast per ID as `nextval()` without cache',
	       pg_temp.x(pg_temp.v('bulk', 'nextval(), no cache', 1, 'ms') / pg_temp.v('bulk', 'snowflake_nextval()', 1, 'ms')),
	       pg_temp.v('bulk', 'nextval(), no cache', 1, 'ms') >= pg_temp.v('bulk', 'snowflake_nextval()', 1, 'ms')
	UNION ALL
	SELECT 2, 'bulk `snowflake_nextval()` at least 3x faster than `gen_random_uuid()`',
	       pg_temp.x(pg_temp.v('bulk', 'gen_random_uuid()', 1, 'ms') / pg_temp.v('bulk', 'snowflake_nextval()', 1, 'ms')),
	       pg_temp.v('bulk', 'gen_random_uuid()', 1, 'ms') >= 3 * pg_temp.v('bulk', 'snowflake_nextval()', 1, 'ms')
	UNION ALL
	SELECT 3, 'bulk generation reaches 90 % of the ceiling, or is within 15 % of the `clock_timestamp()` floor',
	       format('%s %% of the ceiling; %s the floor''s time',
	              pg_temp.num(100 * (:n / pg_temp.v('bulk', 'snowflake_nextval()', 1, 'ms') * 1000) / :ceiling),
	              pg_temp.x(pg_temp.v('bulk', 'snowflake_nextval()', 1, 'ms') / pg_temp.v('bulk', 'clock_timestamp() (floor)', 1, 'ms'))),
	       (:n / pg_temp.v('bulk', 'snowflake_nextval()', 1, 'ms') * 1000) >= 0.9 * :ceiling
	       OR pg_temp.v('bulk', 'snowflake_nextval()', 1, 'ms') <= 1.15 * pg_temp.v('bulk', 'clock_timestamp() (floor)', 1, 'ms')
	UNION ALL
	SELECT 4, 'pgbench `SELECT snowflake_nextval()` at least 0.95x `SELECT nextval()`',
	       format('%s (geometric mean over client counts); lowest %s; spread %s',
	              pg_temp.x(overall), pg_temp.x(lowest), pg_temp.spread('select')),
	       overall >= 0.95
	  FROM pg_temp.ratios('select', 'snowflake_nextval()', 'nextval(), no cache')
	UNION ALL
	SELECT 5, 'pgbench inserts at least 0.97x `bigserial`',
	       format('%s (geometric mean over client counts); lowest %s; spread %s',
	              pg_temp.x(overall), pg_temp.x(lowest), pg_temp.spread('insert')),
	       overall >= 0.97
	  FROM pg_temp.ratios('insert', 'DEFAULT snowflake_nextval()', 'bigserial')
	UNION ALL
	SELECT 6, '`INSERT ... SELECT` at least 0.97x `bigserial`',
	       pg_temp.x(pg_temp.v('insert_select', 'bigserial', 1, 'ms') / value),
	       pg_temp.v('insert_select', 'bigserial', 1, 'ms') / value >= 0.97
	  FROM med WHERE section = 'insert_select' AND ord = 0
	UNION ALL
	SELECT 7, 'index size within 2 % of `bigserial`''s (`INSERT ... SELECT`; per row after pgbench)',
	       format('%s; %s',
	              pg_temp.x(pg_temp.v('insert_select_size', n, 0, 'index_bytes') / pg_temp.v('insert_select_size', 'bigserial', 0, 'index_bytes')),
	              pg_temp.x((pg_temp.v('insert_size', n, 0, 'index_bytes') / pg_temp.v('insert_size', n, 0, 'rows'))
	                        / (pg_temp.v('insert_size', 'bigserial', 0, 'index_bytes') / pg_temp.v('insert_size', 'bigserial', 0, 'rows')))),
	       abs(pg_temp.v('insert_select_size', n, 0, 'index_bytes') / pg_temp.v('insert_select_size', 'bigserial', 0, 'index_bytes') - 1) <= 0.02
	       AND abs((pg_temp.v('insert_size', n, 0, 'index_bytes') / pg_temp.v('insert_size', n, 0, 'rows'))
	               / (pg_temp.v('insert_size', 'bigserial', 0, 'index_bytes') / pg_temp.v('insert_size', 'bigserial', 0, 'rows')) - 1) <= 0.02
	  FROM (SELECT name AS n FROM med WHERE section = 'insert_select_size' AND ord = 0 LIMIT 1) k
	UNION ALL
	SELECT 8, 'inserts clearly (10 %) ahead of `gen_random_uuid()` (pgbench; `INSERT ... SELECT`)',
	       format('%s (geometric mean over client counts), lowest %s; %s',
	              pg_temp.x(overall), pg_temp.x(lowest),
	              pg_temp.x(pg_temp.v('insert_select', 'DEFAULT gen_random_uuid()', 1, 'ms')
	                        / pg_temp.v('insert_select', 'DEFAULT snowflake_nextval()', 1, 'ms'))),
	       overall >= 1.10
	       AND pg_temp.v('insert_select', 'DEFAULT gen_random_uuid()', 1, 'ms')
	           >= 1.10 * pg_temp.v('insert_select', 'DEFAULT snowflake_nextval()', 1, 'ms')
	  FROM pg_temp.ratios('insert', 'DEFAULT snowflake_nextval()', 'DEFAULT gen_random_uuid()')
	UNION ALL
	SELECT 9, 'the batch form at least 2x cheaper per ID than row-by-row calls (select list; in FROM; instructions)',
	       format('%s; %s; %s',
	              pg_temp.x(pg_temp.v('bulk', 'snowflake_nextval()', 1, 'ms') / pg_temp.v('bulk', 'snowflake_nextval(n), in the select list', 1, 'ms')),
	              pg_temp.x(pg_temp.v('bulk', 'snowflake_nextval()', 1, 'ms') / pg_temp.v('bulk', 'snowflake_nextval(n), in FROM', 1, 'ms')),
	              pg_temp.x(pg_temp.v('callgrind', 'snowflake_nextval()', 1, 'instructions') / pg_temp.v('callgrind', 'snowflake_nextval(n), per ID', 1, 'instructions'))),
	       pg_temp.v('bulk', 'snowflake_nextval()', 1, 'ms') >= 2 * pg_temp.v('bulk', 'snowflake_nextval(n), in the select list', 1, 'ms')
)
SELECT pg_temp.md(target, measured, CASE WHEN met THEN 'yes' ELSE '**no**' END) FROM t ORDER BY ord;
