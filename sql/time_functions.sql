--
-- snowflake_to_timestamptz, snowflake_min_id, snowflake_max_id and
-- snowflake_compose under the default layout (41/10/12 bits, epoch
-- 2025-01-01 00:00:00+00): fixed values, agreement with snowflake_parse,
-- and every error.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';

-- IDs to instants
SELECT id, snowflake_to_timestamptz(id)
  FROM (VALUES (0::bigint),
               (4194303),                               -- last ID of the first ms
               (4194304),                               -- first ID of the second ms
               ((1000::bigint << 22) | (5 << 12) | 7),  -- 1 s, worker 5, seq 7
               (250099318017519616),                    -- an ID issued in 2026
               (9223372036854775807)                    -- the last ID of the layout
       ) v(id)
 ORDER BY id;

-- instants to the first and last ID of their millisecond
SELECT ts, snowflake_min_id(ts) AS min_id, snowflake_max_id(ts) AS max_id
  FROM (VALUES ('2025-01-01 00:00:00+00'::timestamptz),      -- the epoch
               ('2025-01-01 00:00:00.000999+00'),             -- still the first ms
               ('2025-01-01 00:00:00.001+00'),
               ('2025-01-01 00:00:01+00'),
               ('2025-01-01 01:00:00+01'),                    -- the epoch, written elsewhere
               ('2026-11-22 03:25:24.036+00'),
               ('2094-09-07 15:47:35.551+00'),                -- the last ms of the lifetime
               ('2094-09-07 15:47:35.551999+00')
       ) v(ts)
 ORDER BY ts, min_id;

-- composing from parts; the created_at is rounded down to the millisecond
SELECT snowflake_compose('2025-01-01 00:00:00+00', 0, 0) AS first,
       snowflake_compose('2025-01-01 00:00:01+00', 5, 7) AS one_second,
       snowflake_compose('2025-01-01 00:00:01.000999+00', 5, 7) AS rounded_down,
       snowflake_compose('2026-11-22 03:25:24.036+00', 7, 0) AS in_2026,
       snowflake_compose('2094-09-07 15:47:35.551+00', 1023, 4095) AS last;

-- min, max and compose agree with each other and with snowflake_parse
SELECT ts,
       snowflake_min_id(ts) = snowflake_compose(ts, 0, 0) AS min_is_compose,
       snowflake_max_id(ts) = snowflake_compose(ts, 1023, 4095) AS max_is_compose,
       (SELECT row(p.created_at, p.worker_id, p.sequence)
          FROM snowflake_parse(snowflake_min_id(ts)) p)::text AS parse_min,
       (SELECT row(p.created_at, p.worker_id, p.sequence)
          FROM snowflake_parse(snowflake_max_id(ts)) p)::text AS parse_max,
       snowflake_to_timestamptz(snowflake_max_id(ts)) = date_trunc('milliseconds', ts) AS max_time
  FROM (VALUES ('2025-01-01 00:00:00+00'::timestamptz),
               ('2025-03-04 05:06:07.089123+00'),
               ('2094-09-07 15:47:35.551+00')) v(ts)
 ORDER BY ts;

-- snowflake_compose inverts snowflake_parse
SELECT id, snowflake_compose(p.created_at, p.worker_id, p.sequence) = id AS round_trip
  FROM (VALUES (0::bigint), (4194324487), (250099318017519616),
               (9223372036854775807)) v(id),
       snowflake_parse(id) p
 ORDER BY id;

-- a fresh ID lies between the bounds of the time around it
SELECT now() AS before \gset
SELECT snowflake_nextval() AS id \gset
SELECT :id BETWEEN snowflake_min_id(:'before') AND snowflake_max_id(clock_timestamp()) AS between_bounds,
       snowflake_to_timestamptz(:id) = (snowflake_parse(:id)).created_at AS same_as_parse;

-- NULL in, NULL out
SELECT snowflake_to_timestamptz(NULL) IS NULL AS a,
       snowflake_min_id(NULL) IS NULL AS b,
       snowflake_max_id(NULL) IS NULL AS c,
       snowflake_compose(NULL, 1, 1) IS NULL AS d,
       snowflake_compose(now(), NULL, 1) IS NULL AS e,
       snowflake_compose(now(), 1, NULL) IS NULL AS f;

-- errors: not an ID
SELECT snowflake_to_timestamptz(-1);
SELECT snowflake_to_timestamptz(-9223372036854775808);

-- errors: instants outside the lifetime, one microsecond beyond each end,
-- and the infinities
SELECT snowflake_min_id('2024-12-31 23:59:59.999999+00');
SELECT snowflake_max_id('2094-09-07 15:47:35.552+00');
SELECT snowflake_min_id('infinity');
SELECT snowflake_max_id('-infinity');
SELECT snowflake_compose('2024-12-31 23:59:59.999+00', 0, 0);
SELECT snowflake_compose('2100-01-01 00:00:00+00', 0, 0);
SELECT snowflake_compose('infinity', 0, 0);

-- errors: parts that do not fit the layout
SELECT snowflake_compose('2025-06-01 00:00:00+00', -1, 0);
SELECT snowflake_compose('2025-06-01 00:00:00+00', 1024, 0);
SELECT snowflake_compose('2025-06-01 00:00:00+00', 0, -1);
SELECT snowflake_compose('2025-06-01 00:00:00+00', 0, 4096);
SELECT snowflake_compose('2025-06-01 00:00:00+00', 2147483647, -2147483648);
