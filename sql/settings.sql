--
-- The settings are server-wide: no session can change any of them, and
-- ALTER SYSTEM refuses values that cannot work.
--
SELECT name, setting, unit, context, vartype, min_val, max_val, boot_val
  FROM pg_settings
 WHERE name LIKE 'snowflake.%'
 ORDER BY name;

SHOW snowflake.worker_id;
SHOW snowflake.epoch;

SET snowflake.worker_id = 2;
SET snowflake.epoch = '2024-01-01 00:00:00+00';
SET snowflake.worker_bits = 8;
SET snowflake.sequence_bits = 14;
SET snowflake.id_bits = 53;
SET snowflake.max_drift = 0;
SET snowflake.max_wait = 0;
BEGIN;
SET LOCAL snowflake.worker_id = 2;
ROLLBACK;
SELECT set_config('snowflake.worker_id', '2', false);
ALTER ROLE CURRENT_USER SET snowflake.worker_id = 2;
ALTER DATABASE contrib_regression SET snowflake.max_drift = 0;

-- the prefix is reserved: a misspelt setting is an error, not a placeholder
SET snowflake.wroker_id = 2;

-- values that could never work are refused before they reach postgresql.auto.conf
ALTER SYSTEM SET snowflake.epoch = '2999-01-01 00:00:00+00';
ALTER SYSTEM SET snowflake.epoch = 'soon';
ALTER SYSTEM SET snowflake.epoch = 'infinity';
ALTER SYSTEM SET snowflake.epoch = '2024-01-01 00:00:00.0005+00';
ALTER SYSTEM SET snowflake.worker_id = 2000000;
ALTER SYSTEM SET snowflake.worker_bits = 21;
ALTER SYSTEM SET snowflake.sequence_bits = 0;
ALTER SYSTEM SET snowflake.id_bits = 64;
ALTER SYSTEM SET snowflake.id_bits = 35;
-- (18 and later write the range with its unit, "(0 ms .. 2147483647 ms)":
-- the message is printed here without it, the same on every major)
\set VERBOSITY sqlstate
ALTER SYSTEM SET snowflake.max_drift = -1;
\set VERBOSITY default
SELECT regexp_replace(:'LAST_ERROR_MESSAGE', '\((-?\d+) ms \.\. (\d+) ms\)$', '(\1 .. \2)') AS error;

-- words whose meaning depends on when they are read are not an epoch
ALTER SYSTEM SET snowflake.epoch = 'today';
ALTER SYSTEM SET snowflake.epoch = 'yesterday';
ALTER SYSTEM SET snowflake.epoch = 'now';
ALTER SYSTEM SET snowflake.epoch = 'epoch';
ALTER SYSTEM SET snowflake.epoch = '-infinity';

-- each value is also checked against the other settings in force
-- (worker_id 1, 10 worker bits, 12 sequence bits, 63 ID bits, so 41
-- timestamp bits): a 53-bit ID would leave the timestamp 31 bits
ALTER SYSTEM SET snowflake.worker_id = 1024;
ALTER SYSTEM SET snowflake.worker_bits = 0;
ALTER SYSTEM SET snowflake.worker_bits = 17;
ALTER SYSTEM SET snowflake.sequence_bits = 19;
ALTER SYSTEM SET snowflake.id_bits = 53;
ALTER SYSTEM SET snowflake.epoch = '1900-01-01 00:00:00+00';

-- none of them reached postgresql.auto.conf; good values do
SELECT count(*) AS snowflake_lines_in_auto_conf
  FROM pg_file_settings
 WHERE name LIKE 'snowflake.%' AND sourcefile LIKE '%postgresql.auto.conf';
ALTER SYSTEM SET snowflake.worker_id = 1023;
ALTER SYSTEM SET snowflake.epoch = '2020-01-01 00:00:00';
ALTER SYSTEM SET snowflake.id_bits = 57;
SELECT name, setting
  FROM pg_file_settings
 WHERE name LIKE 'snowflake.%' AND sourcefile LIKE '%postgresql.auto.conf'
 ORDER BY name;
ALTER SYSTEM RESET snowflake.worker_id;
ALTER SYSTEM RESET snowflake.epoch;
ALTER SYSTEM RESET snowflake.id_bits;

-- the epoch was read once, in UTC, when the server started: a session's
-- TimeZone does not move it
SET TimeZone = 'Pacific/Auckland';
SELECT epoch = '2025-01-01 00:00:00+00' AS epoch_in_utc FROM snowflake_stats;
SELECT created_at = '2025-01-01 00:00:00+00' AS id_0_at_epoch FROM snowflake_parse(0);
RESET TimeZone;
