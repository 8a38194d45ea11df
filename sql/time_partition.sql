--
-- Range partitioning on a snowflake ID by month, with bounds from
-- snowflake_min_id(): the time-range operator prunes partitions, at plan
-- time for a constant range and at executor startup for a range computed
-- at run time.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';

CREATE TABLE measurements (
    id bigint NOT NULL DEFAULT snowflake_nextval(),
    value double precision
) PARTITION BY RANGE (id);

-- one partition per month of 2025 so far; partition bounds may be
-- expressions, evaluated once when the partition is created
DO $$
DECLARE
    m date;
BEGIN
    FOR m IN SELECT generate_series(date '2025-01-01', date '2025-04-01', interval '1 month')
    LOOP
        EXECUTE format('CREATE TABLE %I PARTITION OF measurements FOR VALUES FROM (%s) TO (%s)',
                       'measurements_' || to_char(m, 'YYYY_MM'),
                       snowflake_min_id(m::timestamp AT TIME ZONE 'UTC'),
                       snowflake_min_id((m + interval '1 month')::timestamp AT TIME ZONE 'UTC'));
    END LOOP;
END
$$;

-- or written out
CREATE TABLE measurements_2025_05 PARTITION OF measurements
    FOR VALUES FROM (snowflake_min_id('2025-05-01 00:00:00+00'))
                 TO (snowflake_min_id('2025-06-01 00:00:00+00'));

SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bounds
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
 WHERE i.inhparent = 'measurements'::regclass
 ORDER BY c.relname;

-- one row every hour, and the first and last ID of each month
INSERT INTO measurements (id, value)
SELECT snowflake_compose(t, 1, 0), extract(epoch FROM t)
  FROM generate_series(timestamptz '2025-01-01 00:30:00+00',
                       timestamptz '2025-05-31 23:30:00+00', interval '1 hour') t;
INSERT INTO measurements (id, value)
SELECT snowflake_min_id(m), 0 FROM generate_series(timestamptz '2025-01-01 00:00:00+00',
                                                   timestamptz '2025-05-01 00:00:00+00',
                                                   interval '1 month') m
UNION ALL
SELECT snowflake_max_id(m - interval '1 millisecond'), 0
  FROM generate_series(timestamptz '2025-02-01 00:00:00+00',
                       timestamptz '2025-06-01 00:00:00+00', interval '1 month') m;
ANALYZE measurements;

-- each ID is in the partition of its month
SELECT tableoid::regclass AS partition,
       min(snowflake_to_timestamptz(id)) AS first, max(snowflake_to_timestamptz(id)) AS last,
       count(*)
  FROM measurements GROUP BY 1 ORDER BY 1;

-- a range inside one month scans one partition
EXPLAIN (COSTS OFF)
SELECT * FROM measurements
 WHERE id <@ tstzrange('2025-02-10 00:00:00+00', '2025-02-20 00:00:00+00');

-- a range across a month boundary scans two
EXPLAIN (COSTS OFF)
SELECT * FROM measurements
 WHERE id <@ tstzrange('2025-02-20 00:00:00+00', '2025-03-10 00:00:00+00');

-- a whole month, closed at the end: the partition bound is exclusive, so
-- [March, April) is one partition and [March, April] touches April too
EXPLAIN (COSTS OFF)
SELECT * FROM measurements
 WHERE id <@ tstzrange('2025-03-01 00:00:00+00', '2025-04-01 00:00:00+00', '[)');
EXPLAIN (COSTS OFF)
SELECT * FROM measurements
 WHERE id <@ tstzrange('2025-03-01 00:00:00+00', '2025-04-01 00:00:00+00', '[]');
SELECT count(*) FROM measurements
 WHERE id <@ tstzrange('2025-03-01 00:00:00+00', '2025-04-01 00:00:00+00', '[)');
SELECT count(*) FROM measurements
 WHERE id <@ tstzrange('2025-03-01 00:00:00+00', '2025-04-01 00:00:00+00', '[]');

-- a range computed at run time is pruned when the executor starts
EXPLAIN (COSTS OFF)
SELECT * FROM measurements
 WHERE id <@ tstzrange('2025-04-15 00:00:00+00'::timestamptz - interval '1 day',
                       '2025-04-15 00:00:00+00'::timestamptz);
SELECT count(*) FROM measurements
 WHERE id <@ tstzrange('2025-04-15 00:00:00+00'::timestamptz - interval '1 day',
                       '2025-04-15 00:00:00+00'::timestamptz);

-- a retention delete: everything created before March
EXPLAIN (COSTS OFF)
DELETE FROM measurements WHERE id <@ tstzrange(NULL, '2025-03-01 00:00:00+00');
DELETE FROM measurements WHERE id <@ tstzrange(NULL, '2025-03-01 00:00:00+00');
SELECT tableoid::regclass AS partition, count(*) FROM measurements GROUP BY 1 ORDER BY 1;

DROP TABLE measurements;
