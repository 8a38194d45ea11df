--
-- snowflake_nextval(n): n IDs reserved at once, with the guarantees of
-- single calls.
--
SELECT ids_issued AS before FROM snowflake_stats \gset
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
       bool_and(id > prev) AS increasing
  FROM (SELECT id, lag(id) OVER (ORDER BY ord) AS prev
          FROM snowflake_nextval(100000) WITH ORDINALITY AS b(id, ord)) s;
SELECT ids_issued - :before AS issued_by_batch FROM snowflake_stats;

-- currval is the batch's last ID; the next single call continues above it
SELECT max(id) = snowflake_currval() AS currval_is_last,
       snowflake_nextval() > max(id) AS next_is_above
  FROM snowflake_nextval(5000) AS b(id);

-- usable in the select list and for bulk inserts
CREATE TABLE bulk (id bigint PRIMARY KEY, n int);
INSERT INTO bulk SELECT snowflake_nextval(20000), 1;
INSERT INTO bulk (id, n) SELECT id, 2 FROM snowflake_nextval(20000) AS id;
SELECT n, count(*) FROM bulk GROUP BY n ORDER BY n;
SELECT (SELECT min(id) FROM bulk WHERE n = 2) > (SELECT max(id) FROM bulk WHERE n = 1)
       AS second_batch_above_first;
DROP TABLE bulk;

-- edge cases: none (no rows, but the checks of any call), NULL (STRICT),
-- negative
SELECT count(*) FROM snowflake_nextval(0);
SELECT count(*) FROM snowflake_nextval(NULL);
SELECT * FROM snowflake_nextval(-1);

-- a batch that needs more ID time than a call may borrow ahead of the clock
-- (snowflake.max_borrow, 1 s) and wait for (snowflake.max_wait, 1 s) is
-- refused at once, whatever the clock, reserving nothing
SELECT ids_issued AS before, refusals AS refusals_before FROM snowflake_stats \gset
SELECT snowflake_nextval(245000000) LIMIT 1;
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT ids_issued - :before AS issued, refusals - :refusals_before AS refused
  FROM snowflake_stats;

-- refused like single calls, for no IDs too
BEGIN READ ONLY;
SELECT * FROM snowflake_nextval(3);
ROLLBACK;
BEGIN READ ONLY;
SELECT * FROM snowflake_nextval(0);
ROLLBACK;
