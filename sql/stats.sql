--
-- snowflake_stats(), its view and snowflake_stats_reset(); refusals in
-- read-only transactions.
--
SET TimeZone = 'UTC';
SELECT snowflake_nextval() IS NOT NULL AS issued;

SELECT worker_id, epoch, timestamp_bits, worker_bits, sequence_bits, lifetime_end,
       ids_issued > 0 AS issued_some,
       last_id >= snowflake_currval() AS last_id_is_latest,
       mark_id >= last_id AS mark_covers_last_id,
       mark_time = (snowflake_parse(mark_id)).created_at AS mark_time_matches,
       marks_written > 0 AS wrote_marks,
       marks_written = marks_by_callers + marks_ahead AS marks_add_up,
       refusals
  FROM snowflake_stats;
SELECT count(*) AS one_row FROM snowflake_stats();

-- reset zeroes the counters, not the state (the background mark writer,
-- which keeps writing marks for a few seconds after the last ID, about one
-- a second, may finish one and write another)
SELECT snowflake_stats_reset();
SELECT ids_issued, largest_drift_ms, marks_by_callers,
       marks_ahead <= 2 AS at_most_two_ahead,
       marks_written = marks_by_callers + marks_ahead AS marks_add_up,
       clock_rollbacks,
       largest_rollback_ms, borrows, waits, wait_time_ms, refusals,
       last_id >= snowflake_currval() AS state_kept,
       stats_reset > now() - interval '1 minute' AS just_reset
  FROM snowflake_stats;

-- a batch of 100000 IDs takes them from about 25 ms of ID time at once,
-- borrowing ahead of the clock: the largest drift records it
SELECT count(*) FROM snowflake_nextval(100000);
SELECT largest_drift_ms >= 20 AS drift_recorded,
       largest_drift_ms >= drift_ms AS largest_is_largest,
       borrows >= 20 AS borrowed
  FROM snowflake_stats;

-- anyone may read the counters; resetting them needs superuser or a grant
CREATE ROLE snowflake_monitor;
SET ROLE snowflake_monitor;
SELECT count(*) AS readable FROM snowflake_stats;
SELECT snowflake_stats_reset();
RESET ROLE;
GRANT EXECUTE ON FUNCTION snowflake_stats_reset() TO snowflake_monitor;
SET ROLE snowflake_monitor;
SELECT snowflake_stats_reset();
RESET ROLE;
REVOKE EXECUTE ON FUNCTION snowflake_stats_reset() FROM snowflake_monitor;
DROP ROLE snowflake_monitor;

-- like nextval(), generation refuses in a read-only transaction
BEGIN READ ONLY;
SELECT snowflake_nextval();
ROLLBACK;
SET default_transaction_read_only = on;
SELECT snowflake_nextval();
RESET default_transaction_read_only;
SELECT snowflake_nextval() > 0 AS works_again;
