--
-- Properties over 100,000 random IDs spread over the whole 63 bits, plus
-- random time ranges: each query counts the IDs that break a property, so
-- every count must be 0.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;
SET TimeZone = 'UTC';

SELECT setseed(0.4242);
CREATE TEMP TABLE ids AS
SELECT (floor(random() * 2147483648)::bigint << 32)
       | floor(random() * 4294967296)::bigint AS id
  FROM generate_series(1, 100000);
-- and the IDs at the ends
INSERT INTO ids VALUES (0), (1), (4194303), (4194304), (9223372036854775807);
SELECT count(*) AS ids, count(*) FILTER (WHERE id < 0) AS negative,
       count(DISTINCT id >> 62) AS top_bit_values
  FROM ids;

-- encode/decode round trip, fixed width, uppercase; lowercase and the
-- aliases O, I and L decode to the same ID
SELECT count(*) FILTER (WHERE snowflake_decode(snowflake_encode(id)) <> id) AS round_trip,
       count(*) FILTER (WHERE length(snowflake_encode(id)) <> 13) AS width,
       count(*) FILTER (WHERE snowflake_encode(id) !~ '^[0-7][0-9A-HJKMNP-TV-Z]{12}$') AS alphabet,
       count(*) FILTER (WHERE snowflake_decode(lower(snowflake_encode(id))) <> id) AS lowercase,
       count(*) FILTER (WHERE snowflake_decode(translate(snowflake_encode(id), '01', 'OL')) <> id) AS aliases,
       count(*) FILTER (WHERE snowflake_decode(translate(lower(snowflake_encode(id)), '01', 'oi')) <> id) AS lower_aliases
  FROM ids;

-- text order (C collation) is numeric order: compare neighbours in
-- numeric order, and sort by text
SELECT count(*) FILTER (WHERE sign(prev_id - id) <> sign(strcmp)) AS neighbours
  FROM (SELECT id, lag(id) OVER w AS prev_id,
               CASE WHEN lag(snowflake_encode(id)) OVER w < snowflake_encode(id) COLLATE "C" THEN -1
                    WHEN lag(snowflake_encode(id)) OVER w > snowflake_encode(id) COLLATE "C" THEN 1
                    ELSE 0 END AS strcmp
          FROM ids WINDOW w AS (ORDER BY id)) s
 WHERE prev_id IS NOT NULL;
SELECT count(*) FILTER (WHERE id_rank <> text_rank) AS rank_differs
  FROM (SELECT rank() OVER (ORDER BY id) AS id_rank,
               rank() OVER (ORDER BY snowflake_encode(id) COLLATE "C") AS text_rank
          FROM ids) s;

-- an ID lies between the first and last ID of its millisecond, which are
-- compose(t, 0, 0) and compose(t, 1023, 4095) and follow on from the
-- millisecond before; compose of its parts gives it back, and
-- to_timestamptz agrees with parse
SELECT count(*) FILTER (WHERE NOT id BETWEEN snowflake_min_id(t) AND snowflake_max_id(t)) AS between_min_max,
       count(*) FILTER (WHERE snowflake_min_id(t) <> snowflake_compose(t, 0, 0)) AS min_is_compose,
       count(*) FILTER (WHERE snowflake_max_id(t) <> snowflake_compose(t, 1023, 4095)) AS max_is_compose,
       count(*) FILTER (WHERE snowflake_compose(t, p.worker_id, p.sequence) <> id) AS compose_parse,
       count(*) FILTER (WHERE p.created_at <> t) AS to_timestamptz_parse,
       count(*) FILTER (WHERE snowflake_to_timestamptz(snowflake_min_id(t)) <> t
                           OR snowflake_to_timestamptz(snowflake_max_id(t)) <> t) AS same_millisecond,
       count(*) FILTER (WHERE snowflake_min_id(t + interval '0.999 ms') <> snowflake_min_id(t)) AS round_down,
       count(*) FILTER (WHERE CASE WHEN t > '2025-01-01 00:00:00+00'
                                   THEN snowflake_max_id(t - interval '1 ms') + 1 <> snowflake_min_id(t)
                              END) AS adjacent
  FROM (SELECT id, snowflake_to_timestamptz(id) AS t FROM ids) s,
       snowflake_parse(id) p;

-- random ranges (bounds on and off millisecond boundaries, all four kinds
-- of ends, some empty) against the IDs at and next to the edges of the
-- milliseconds around them: the rewritten operator, the function itself
-- and the definition agree
SELECT setseed(0.1717);
CREATE TEMP TABLE ranges AS
SELECT lo, tstzrange(lo, lo + len, (ARRAY['[]', '[)', '(]', '()'])[1 + floor(random() * 4)::int]) AS r
  FROM (SELECT timestamptz '2025-01-01 00:00:00+00'
               + floor(random() * 2199023255552) * interval '1 ms'
               + CASE WHEN random() < 0.5 THEN floor(random() * 1000) * interval '1 us'
                      ELSE interval '0' END AS lo,
               floor(random() * 3) * interval '1 ms'
               + CASE WHEN random() < 0.5 THEN floor(random() * 1000) * interval '1 us'
                      ELSE interval '0' END AS len
          FROM generate_series(1, 4000)) b;
SELECT count(*) AS cases,
       count(*) FILTER (WHERE (i.id <@ q.r) <> (q.r @> snowflake_to_timestamptz(i.id))) AS rewrite_vs_definition,
       count(*) FILTER (WHERE (i.id <@ q.r) <> snowflake_in_range(i.id + (0 * random())::bigint, q.r)) AS rewrite_vs_function,
       count(*) FILTER (WHERE i.id <@ q.r) > 0 AS some_inside,
       count(*) FILTER (WHERE NOT i.id <@ q.r) > 0 AS some_outside,
       count(*) FILTER (WHERE isempty(q.r)) > 0 AS some_empty
  FROM ranges q
  JOIN LATERAL (SELECT snowflake_min_id(q.lo) + k * 4194304 + d AS id
                  FROM generate_series(-1, 4) k,
                       unnest(ARRAY[-1, 0, 1, 2097152, 4194303]) d) i
    ON i.id BETWEEN 0 AND 9223372036854775807;
