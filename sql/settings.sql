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
ALTER SYSTEM SET snowflake.max_drift = -1;
