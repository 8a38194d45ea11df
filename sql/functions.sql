--
-- snowflake_nextval(), snowflake_currval(), snowflake_parse() and their use
-- as a column default.  The instance preloads snowflake with worker_id = 1.
--
SET TimeZone = 'UTC';

-- currval before the first nextval of the session
SELECT snowflake_currval();

-- nextval increases; currval is the session's last value
SELECT snowflake_nextval() AS a \gset
SELECT snowflake_nextval() AS b \gset
SELECT :b > :a AS increasing, snowflake_currval() = :b AS currval_is_last;

-- a fresh ID carries this server's worker id and the current time
SELECT worker_id,
       created_at BETWEEN now() - interval '1 minute'
                      AND clock_timestamp() + interval '1 minute' AS created_now
  FROM snowflake_parse(snowflake_nextval());

-- as a column default: INSERT ... RETURNING, INSERT ... SELECT, COPY
CREATE TABLE items (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), n int);
INSERT INTO items (n) VALUES (1) RETURNING id = snowflake_currval() AS returned_currval;
INSERT INTO items (n) SELECT g FROM generate_series(2, 20000) g;
COPY items (n) FROM stdin;
20001
20002
20003
\.
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids,
       bool_and(p.worker_id = 1) AS all_worker_1
  FROM items, snowflake_parse(id) p;
-- one session inserted them in order of n, so the IDs increase with n
SELECT bool_and(id > prev) AS increasing
  FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM items) s
 WHERE prev IS NOT NULL;

-- one generator for the whole server: another table continues above
CREATE TABLE others (id bigint PRIMARY KEY DEFAULT snowflake_nextval());
INSERT INTO others DEFAULT VALUES;
SELECT (SELECT id FROM others) > (SELECT max(id) FROM items) AS above_other_table;

-- parallel workers draw from the same generator
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF, VERBOSE)
SELECT snowflake_nextval() AS x FROM items;
SELECT count(*) AS rows, count(DISTINCT x) AS distinct_ids
  FROM (SELECT snowflake_nextval() AS x FROM items) s;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- parse is STRICT, and refuses negative IDs
SELECT snowflake_parse(NULL) IS NULL AS null_in_null_out;
SELECT snowflake_parse(-1);
SELECT * FROM snowflake_parse(-9223372036854775808);

DROP TABLE items, others;
