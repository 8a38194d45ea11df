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
SHOW snowflake.max_borrow;

SET snowflake.worker_id = 2;
SET snowflake.epoch = '2024-01-01 00:00:00+00';
SET snowflake.worker_bits = 8;
SET snowflake.sequence_bits = 14;
SET snowflake.sequence_start = zero;
SET snowflake.id_bits = 53;
SET snowflake.max_drift = 0;
SET snowflake.max_wait = 0;
SET snowflake.max_borrow = 0;
BEGIN;
SET LOCAL snowflake.worker_id = 2;
ROLLBACK;
SELECT set_config('snowflake.worker_id', '2', false);
ALTER ROLE CURRENT_USER SET snowflake.worker_id = 2;
ALTER DATABASE contrib_regression SET snowflake.max_drift = 0;
ALTER ROLE CURRENT_USER SET snowflake.sequence_start = zero;

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
\set VERBOSITY sqlstate
ALTER SYSTEM SET snowflake.max_borrow = -1;
\set VERBOSITY default
SELECT regexp_replace(:'LAST_ERROR_MESSAGE', '\((-?\d+) ms \.\. (\d+) ms\)$', '(\1 .. \2)') AS error;
-- a lease shorter than a second would leave no time to renew it
\set VERBOSITY sqlstate
ALTER SYSTEM SET snowflake.lease_time = '500ms';
\set VERBOSITY default
SELECT regexp_replace(:'LAST_ERROR_MESSAGE', '\((-?\d+) ms \.\. (\d+) ms\)$', '(\1 .. \2)') AS error;

-- words whose meaning depends on when they are read are not an epoch
ALTER SYSTEM SET snowflake.epoch = 'today';
ALTER SYSTEM SET snowflake.epoch = 'yesterday';
ALTER SYSTEM SET snowflake.epoch = 'now';
ALTER SYSTEM SET snowflake.epoch = 'epoch';
ALTER SYSTEM SET snowflake.epoch = '-infinity';

-- nor are forms whose meaning depends on DateStyle or
-- timezone_abbreviations: the epoch is ISO 8601, read the same in every
-- session and on every server
SET DateStyle = 'ISO, DMY';
ALTER SYSTEM SET snowflake.epoch = '13/01/2025 00:00:00+00';
ALTER SYSTEM SET snowflake.epoch = '01/02/2025 00:00:00+00';
SET DateStyle = 'ISO, MDY';
ALTER SYSTEM SET snowflake.epoch = '01/13/2025 00:00:00+00';
ALTER SYSTEM SET snowflake.epoch = 'January 2, 2025 00:00:00+00';
RESET DateStyle;
SET timezone_abbreviations = 'India';
ALTER SYSTEM SET snowflake.epoch = '2025-01-01 00:00:00 IST';
RESET timezone_abbreviations;
ALTER SYSTEM SET snowflake.epoch = '2025-01-01 00:00:00 EST';
ALTER SYSTEM SET snowflake.epoch = '2025-01-01 00:00:00 Mars/Olympus_Mons';
-- local times that Paris skipped, and lived twice, in 2025
ALTER SYSTEM SET snowflake.epoch = '2025-03-30 02:30:00 Europe/Paris';
ALTER SYSTEM SET snowflake.epoch = '2025-10-26 02:30:00 Europe/Paris';
ALTER SYSTEM SET snowflake.epoch = '2025-01-01';
ALTER SYSTEM SET snowflake.epoch = '2025-01-01 00:00+00';
ALTER SYSTEM SET snowflake.epoch = '2025-01-01 00:00:00+5';
ALTER SYSTEM SET snowflake.epoch = '2025-01-01 00:00:00+16';
ALTER SYSTEM SET snowflake.epoch = '2025-02-29 00:00:00+00';
ALTER SYSTEM SET snowflake.epoch = '2025-01-01 24:00:00+00';
ALTER SYSTEM SET snowflake.epoch = '2025-01-01 00:00:00.0001+00';

-- each value is also checked as part of the layout the next server start
-- would read; nothing is pending yet, so the other settings are the ones in
-- force (worker_id 1, 10 worker bits, 12 sequence bits, 63 ID bits, so 41
-- timestamp bits, the epoch 2025-01-01): a 53-bit ID would leave the
-- timestamp 31 bits
ALTER SYSTEM SET snowflake.worker_id = 1024;
ALTER SYSTEM SET snowflake.worker_bits = 0;
ALTER SYSTEM SET snowflake.worker_bits = 17;
ALTER SYSTEM SET snowflake.sequence_bits = 19;
ALTER SYSTEM SET snowflake.id_bits = 53;
ALTER SYSTEM SET snowflake.epoch = '1900-01-01 00:00:00+00';
-- 16 worker bits leave 35 timestamp bits, which lasted from the epoch until
-- 2026-02-02
ALTER SYSTEM SET snowflake.worker_bits = 16;

-- none of them reached postgresql.auto.conf; good values do
SELECT count(*) AS snowflake_lines_in_auto_conf
  FROM pg_file_settings
 WHERE name LIKE 'snowflake.%' AND sourcefile LIKE '%postgresql.auto.conf';
ALTER SYSTEM SET snowflake.worker_id = 1023;
ALTER SYSTEM SET snowflake.epoch = '2020-01-01 00:00:00';
-- 62 ID bits leave 40 timestamp bits, 34.8 years from the pending epoch
ALTER SYSTEM SET snowflake.id_bits = 62;
SELECT name, setting
  FROM pg_file_settings
 WHERE name LIKE 'snowflake.%' AND sourcefile LIKE '%postgresql.auto.conf'
 ORDER BY name;
-- every spelling the epoch takes: T or a space, fractions of a second, a UTC
-- offset, Z, UTC, a zone name
ALTER SYSTEM SET snowflake.epoch = '2025-01-01T00:00:00Z';
ALTER SYSTEM SET snowflake.epoch = '2025-01-01 00:00:00.000 UTC';
ALTER SYSTEM SET snowflake.epoch = '2025-01-01 05:30:00+05:30';
ALTER SYSTEM SET snowflake.epoch = '2024-12-31 16:00:00 -0800';
ALTER SYSTEM SET snowflake.epoch = '2025-01-01 01:00:00 Europe/Paris';
ALTER SYSTEM SET snowflake.epoch = '2025-10-26 03:30:00 Europe/Paris';
ALTER SYSTEM SET snowflake.epoch = '2025-01-01 00:00:00.5+00';
ALTER SYSTEM RESET snowflake.worker_id;
ALTER SYSTEM RESET snowflake.epoch;
ALTER SYSTEM RESET snowflake.id_bits;
-- the borrowing bound in any unit of time, stored as given
ALTER SYSTEM SET snowflake.max_borrow = '2s';
SELECT name, setting
  FROM pg_file_settings
 WHERE name = 'snowflake.max_borrow' AND sourcefile LIKE '%postgresql.auto.conf';
ALTER SYSTEM RESET snowflake.max_borrow;

-- values written by ALTER SYSTEM but not yet in force count as well: the
-- next start reads them all together.  First a pending epoch of yesterday,
-- under which 16 worker bits have a year to go (computed, and not echoed,
-- so the output is the same on every day)
\set ECHO none
SELECT format('ALTER SYSTEM SET snowflake.epoch = %L',
              to_char(date_trunc('day', now() AT TIME ZONE 'UTC') - interval '1 day',
                      'YYYY-MM-DD HH24:MI:SS')) \gexec
\set ECHO all
ALTER SYSTEM SET snowflake.worker_bits = 16;
-- with 16 pending worker bits: 16 sequence bits would leave 31 timestamp
-- bits, 13 would leave 34, and the epoch 2020 is more than the 35 bits'
-- 1.09 years ago (each is fine with the 10 worker bits in force)
ALTER SYSTEM SET snowflake.sequence_bits = 16;
ALTER SYSTEM SET snowflake.sequence_bits = 13;
ALTER SYSTEM SET snowflake.epoch = '2020-01-01 00:00:00+00';
-- a worker id that needs the pending 16 worker bits is accepted, and then
-- fewer worker bits are not
ALTER SYSTEM SET snowflake.worker_id = 40000;
ALTER SYSTEM SET snowflake.worker_bits = 15;
SELECT name, setting
  FROM pg_file_settings
 WHERE name LIKE 'snowflake.%' AND name <> 'snowflake.epoch'
   AND sourcefile LIKE '%postgresql.auto.conf'
 ORDER BY name;
ALTER SYSTEM RESET snowflake.worker_id;
ALTER SYSTEM RESET snowflake.worker_bits;
ALTER SYSTEM RESET snowflake.epoch;

-- so a 53-bit layout for JavaScript is reached by narrowing the fields
-- first, each step leaving a layout that works
ALTER SYSTEM SET snowflake.id_bits = 53;
ALTER SYSTEM SET snowflake.worker_bits = 4;
ALTER SYSTEM SET snowflake.sequence_bits = 8;
ALTER SYSTEM SET snowflake.id_bits = 53;
SELECT name, setting
  FROM pg_file_settings
 WHERE name LIKE 'snowflake.%' AND sourcefile LIKE '%postgresql.auto.conf'
 ORDER BY name;
ALTER SYSTEM RESET snowflake.id_bits;
ALTER SYSTEM RESET snowflake.worker_bits;
ALTER SYSTEM RESET snowflake.sequence_bits;

-- where each new millisecond's sequence starts: spread (the default) or
-- zero, and nothing else
SHOW snowflake.sequence_start;
SELECT enumvals FROM pg_settings WHERE name = 'snowflake.sequence_start';
ALTER SYSTEM SET snowflake.sequence_start = 'random';
ALTER SYSTEM SET snowflake.sequence_start = '0';
ALTER SYSTEM SET snowflake.sequence_start = '';
ALTER SYSTEM SET snowflake.sequence_start = zero;
SELECT name, setting
  FROM pg_file_settings
 WHERE name LIKE 'snowflake.%' AND sourcefile LIKE '%postgresql.auto.conf'
 ORDER BY name;
ALTER SYSTEM RESET snowflake.sequence_start;

-- the epoch was read once, in UTC, when the server started: a session's
-- TimeZone does not move it
SET TimeZone = 'Pacific/Auckland';
SELECT epoch = '2025-01-01 00:00:00+00' AS epoch_in_utc FROM snowflake_stats;
SELECT created_at = '2025-01-01 00:00:00+00' AS id_0_at_epoch FROM snowflake_parse(0);
RESET TimeZone;
