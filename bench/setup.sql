-- bench/setup.sql - the objects bench/run.sh measures, and where it keeps
-- the numbers.  Run once in a fresh database of the benchmark's cluster.

CREATE EXTENSION snowflake;

-- The competitors.  gen_random_uuid(), uuidv7() (18 and later) and
-- clock_timestamp() are built in.
CREATE SEQUENCE seq_nocache;				-- CACHE 1, the default
CREATE SEQUENCE seq_cache100 CACHE 100;

-- Single-row and bulk inserts: the same table with three kinds of key.
CREATE TABLE ins_snowflake (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v int);
CREATE TABLE ins_bigserial (id bigserial PRIMARY KEY, v int);
CREATE TABLE ins_uuid (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), v int);
-- PostgreSQL 18 and later: the same with its own uuidv7().
SELECT to_regprocedure('uuidv7()') IS NOT NULL AS has_uuidv7 \gset
\if :has_uuidv7
CREATE TABLE ins_uuidv7 (id uuid PRIMARY KEY DEFAULT uuidv7(), v int);
\endif

-- One row per measurement.  ord orders the competitors within a section.
CREATE TABLE results (
	section	text NOT NULL,
	ord		int NOT NULL,
	name	text NOT NULL,
	clients	int NOT NULL,
	rep		int NOT NULL,
	metric	text NOT NULL,
	value	float8 NOT NULL
);

-- The wall-clock time of one statement, in milliseconds, measured in the
-- server, so the client's round trip is not in it.
CREATE FUNCTION time_ms(q text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
	t0	timestamptz := clock_timestamp();
BEGIN
	EXECUTE q;
	RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END
$$;

-- A burst: run q, a query that returns IDs, and report its time, how many
-- IDs it returned, and how far the last ID's timestamp was ahead of the
-- clock when the burst ended (during a burst above the ceiling the lead only
-- grows, so this is the largest it reached).
CREATE FUNCTION burst(q text, OUT ms float8, OUT ids bigint, OUT end_drift_ms float8)
LANGUAGE plpgsql AS $$
DECLARE
	t0		timestamptz := clock_timestamp();
	last_id	bigint;
BEGIN
	EXECUTE format('SELECT count(*), max(id) FROM (%s) AS s(id)', q) INTO ids, last_id;
	ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
	end_drift_ms := greatest(extract(epoch FROM snowflake_to_timestamptz(last_id)
										 - clock_timestamp()) * 1000, 0);
END
$$;

-- Wait until the generator's logical clock is back at the wall clock, so
-- that a measurement does not start with time borrowed by the one before.
CREATE FUNCTION settle() RETURNS void
LANGUAGE sql AS $$
	SELECT pg_sleep(drift_ms / 1000.0 + 0.01) FROM snowflake_stats
$$;

-- The median of each measurement over the repetitions.
CREATE VIEW med AS
	SELECT section, ord, name, clients, metric,
		   percentile_cont(0.5) WITHIN GROUP (ORDER BY value) AS value
	  FROM results
	 GROUP BY section, ord, name, clients, metric;
