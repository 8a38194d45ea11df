--
-- Worker-id leases, the registry's side: snowflake.lease_claim,
-- snowflake.lease_renew and snowflake.lease_release, called directly as a
-- server's lease keeper calls them over libpq, with fixed tokens and made-up
-- systems (7000000000000000001, ...).  A lapse is simulated by moving
-- lease_expires into the past.  (Servers that lease through them:
-- t/310_lease_fleet.pl to t/313_lease_registry_down.pl.)
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';

-- An error as its fields, with timestamps replaced by "TIME".
CREATE FUNCTION pg_temp.error_of(statement text,
                                 OUT code text, OUT message text,
                                 OUT detail text, OUT hint text)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE statement;
    message := 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS code = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
                            detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
    detail := regexp_replace(detail,
                             '\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\+00', 'TIME', 'g');
END
$$;

-- The rows of the registry, without the columns that hold the time.
CREATE FUNCTION pg_temp.leases(OUT worker_id integer, OUT system bigint,
                               OUT host text, OUT holder text,
                               OUT lapsed boolean, OUT ceiling bigint,
                               OUT fence bigint)
RETURNS SETOF record
LANGUAGE sql AS $$
    SELECT w.worker_id, w.system_identifier, w.host,
           CASE w.holder
                WHEN snowflake.lease_digest('00000000-0000-4000-8000-00000000000a') THEN 'a'
                WHEN snowflake.lease_digest('00000000-0000-4000-8000-00000000000b') THEN 'b'
                WHEN snowflake.lease_digest('00000000-0000-4000-8000-00000000000c') THEN 'c'
                WHEN snowflake.lease_digest('00000000-0000-4000-8000-0000000000c2') THEN 'c2'
                WHEN snowflake.lease_digest('00000000-0000-4000-8000-00000000000d') THEN 'd'
                WHEN snowflake.lease_digest('00000000-0000-4000-8000-0000000000ff') THEN 'x'
                ELSE CASE WHEN w.holder IS NOT NULL THEN 'other' END
           END,
           w.lease_expires <= now(), w.ceiling, w.fence
      FROM snowflake.workers w ORDER BY w.worker_id
$$;

\set tok_a '00000000-0000-4000-8000-00000000000a'
\set tok_b '00000000-0000-4000-8000-00000000000b'
\set tok_c '00000000-0000-4000-8000-00000000000c'
\set tok_c2 '00000000-0000-4000-8000-0000000000c2'
\set tok_d '00000000-0000-4000-8000-00000000000d'
\set tok_x '00000000-0000-4000-8000-0000000000ff'
\set layout 'id_bits 63, worker_bits 2, sequence_bits 12, epoch 2025-01-01T00:00:00.000Z'

-- the table keeps the SHA-256 of a token, never the token
SELECT snowflake.lease_digest(:'tok_a') = sha256(uuid_send(:'tok_a')) AS is_sha256,
       length(snowflake.lease_digest(:'tok_a')) AS bytes;
SELECT snowflake.lease_digest(NULL) IS NULL AS strict;

SELECT count(*) AS registered FROM snowflake.workers;

--
-- Claims
--

-- a free worker id, with no fence (-1: no one issued under it); the lease
-- lasts lease_ms on the registry's clock
SELECT worker_id, fence, lease_expires - now() AS lasts
  FROM snowflake.lease_claim(7000000000000000001, 'host-a', :'layout', 2, 1000,
                             :'tok_a', NULL, NULL, false);
SELECT * FROM pg_temp.leases();
-- another system gets the next free one
SELECT worker_id, fence
  FROM snowflake.lease_claim(7000000000000000002, 'host-b', :'layout', 2, 60000,
                             :'tok_b', NULL, NULL, false);

--
-- Renewals raise the ceiling, never lower it, and extend the lease; only
-- the holder's token renews
--
SELECT ceiling, lease_expires - now() AS lasts
  FROM snowflake.lease_renew(0, :'tok_a', 1000, 60000);
SELECT ceiling FROM snowflake.lease_renew(0, :'tok_a', 500, 60000);
SELECT ceiling FROM snowflake.lease_renew(0, :'tok_a', 2000, 60000);
-- the lease time is clamped to 1 second ... 1 day, as in lease_claim
SELECT lease_expires - now() AS lasts FROM snowflake.lease_renew(0, :'tok_a', 2000, 10);
SELECT lease_expires - now() AS lasts FROM snowflake.lease_renew(0, :'tok_a', 2000, 2000000000);
SELECT lease_expires - now() AS lasts FROM snowflake.lease_renew(0, :'tok_a', 2000, 60000);
-- a wrong token, or another worker id: no row, nothing changed
SELECT count(*) AS renewed FROM snowflake.lease_renew(0, :'tok_x', 9000, 60000);
SELECT count(*) AS renewed FROM snowflake.lease_renew(0, :'tok_b', 9000, 60000);
SELECT count(*) AS renewed FROM snowflake.lease_renew(2, :'tok_a', 9000, 60000);
SELECT count(*) AS renewed FROM snowflake.lease_renew(0, :'tok_a', NULL, 60000);
SELECT * FROM pg_temp.leases();

--
-- A held worker id
--

-- configured: refused, naming the holder
\x on
SELECT * FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(7000000000000000003, %L, %L, 2, 60000, %L, 0, NULL, true)',
    'host-c', :'layout', :'tok_c'));
\x off
-- not configured: "prefer" is only a preference, another free id is given
SELECT worker_id, fence
  FROM snowflake.lease_claim(7000000000000000003, 'host-c', :'layout', 2, 60000,
                             :'tok_c', 0, NULL, false);
SELECT ceiling FROM snowflake.lease_renew(2, :'tok_c', 2500, 60000);
-- a proof with another token, or from another system, is no proof
SELECT message FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(7000000000000000001, %L, %L, 2, 60000, %L, 0, %L, true)',
    'host-a', :'layout', :'tok_x', :'tok_x'));
SELECT message FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(7000000000000000003, %L, %L, 2, 60000, %L, 0, %L, true)',
    'host-c', :'layout', :'tok_d', :'tok_a'));
SELECT * FROM pg_temp.leases();

--
-- A lapsed lease is taken, fenced at its ceiling
--
UPDATE snowflake.workers SET lease_expires = now() - interval '1 second' WHERE worker_id = 0;
SELECT worker_id, fence
  FROM snowflake.lease_claim(7000000000000000004, 'host-d', :'layout', 2, 60000,
                             :'tok_d', 0, NULL, true);
SELECT * FROM pg_temp.leases();
-- the earlier holder can neither renew nor release it any more
SELECT count(*) AS renewed FROM snowflake.lease_renew(0, :'tok_a', 9000, 60000);
SELECT snowflake.lease_release(0, :'tok_a', 9000) AS released;
SELECT ceiling, fence FROM snowflake.workers WHERE worker_id = 0;
-- the new holder renews from its fence on
SELECT ceiling FROM snowflake.lease_renew(0, :'tok_d', 3000, 60000);

--
-- The proof: the same system, presenting its holder's token with a new
-- one (a restart after a crash, a promoted standby), takes the lease before
-- it lapses, fenced like any claim
--
SELECT worker_id, fence
  FROM snowflake.lease_claim(7000000000000000003, 'host-c', :'layout', 2, 60000,
                             :'tok_c2', 2, :'tok_c', false);
SELECT * FROM pg_temp.leases();
-- the token it replaced holds nothing any more
SELECT count(*) AS renewed FROM snowflake.lease_renew(2, :'tok_c', 9000, 60000);
-- the proof serves the same system only, even with the right token
SELECT ceiling FROM snowflake.lease_renew(2, :'tok_c2', 5000, 60000);
SELECT message FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(7000000000000000002, %L, %L, 2, 60000, %L, 2, %L, true)',
    'host-b', :'layout', :'tok_x', :'tok_c2'));

--
-- Releases: the ceiling falls to the last ID issued, never below the fence
--
SELECT snowflake.lease_release(2, :'tok_c2', 4000) AS released;
SELECT * FROM pg_temp.leases();
-- a released lease is free at once; the next holder starts above 4000
SELECT worker_id, fence
  FROM snowflake.lease_claim(7000000000000000005, 'host-e', :'layout', 2, 60000,
                             :'tok_x', 2, NULL, true);
SELECT ceiling FROM snowflake.lease_renew(2, :'tok_x', 8000, 60000);
-- released with a last ID below its fence (it issued nothing): the
-- ceiling stays at the fence, above every earlier holder's IDs
SELECT snowflake.lease_release(2, :'tok_x', 10) AS released;
SELECT ceiling, fence FROM snowflake.workers WHERE worker_id = 2;
-- a release without the token releases nothing
SELECT snowflake.lease_release(1, :'tok_x', 0) AS released;
SELECT snowflake.lease_release(1, NULL, 0) AS released;
SELECT lapsed, ceiling FROM pg_temp.leases() WHERE worker_id = 1;
-- a release without a last ID keeps the ceiling
SELECT ceiling FROM snowflake.lease_renew(1, :'tok_b', 700, 60000);
SELECT snowflake.lease_release(1, :'tok_b', NULL) AS released;
SELECT lapsed, ceiling FROM pg_temp.leases() WHERE worker_id = 1;

--
-- Which worker id a claim gets: a free one first, then the lapsed lease
-- with the lowest ceiling
--
SELECT * FROM pg_temp.leases();
SELECT worker_id, fence
  FROM snowflake.lease_claim(7000000000000000006, 'host-f', :'layout', 2, 60000,
                             '00000000-0000-4000-8000-000000000f01', NULL, NULL, false);
UPDATE snowflake.workers SET lease_expires = now() - interval '1 second' WHERE worker_id IN (0, 1);
SELECT worker_id, fence
  FROM snowflake.lease_claim(7000000000000000006, 'host-f', :'layout', 2, 60000,
                             '00000000-0000-4000-8000-000000000f02', NULL, NULL, false);

SELECT worker_id, fence
  FROM snowflake.lease_claim(7000000000000000006, 'host-f', :'layout', 2, 60000,
                             '00000000-0000-4000-8000-000000000f03', NULL, NULL, false);

--
-- Exhaustion: every worker id leased and unexpired
--
SELECT worker_id, fence
  FROM snowflake.lease_claim(7000000000000000007, 'host-g', :'layout', 2, 60000,
                             '00000000-0000-4000-8000-000000000f04', NULL, NULL, false);
SELECT count(*) AS held FROM snowflake.workers WHERE lease_expires > now();
\x on
SELECT * FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(7000000000000000008, %L, %L, 2, 60000, %L, NULL, NULL, false)',
    'host-h', :'layout', '00000000-0000-4000-8000-000000000f05'));
\x off

--
-- The layout: ceilings are IDs, so one layout for the whole registry
--
\x on
SELECT * FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(7000000000000000008, %L, %L, 2, 60000, %L, NULL, NULL, false)',
    'host-h', replace(:'layout', '2025-01-01', '2024-01-01'), '00000000-0000-4000-8000-000000000f04'));
\x off

--
-- Hand registrations (snowflake_register_worker) share the table: a claim
-- takes a hand-registered worker id only for the system that registered it
--
TRUNCATE snowflake.workers;
INSERT INTO snowflake.workers (worker_id, system_identifier, host)
VALUES (1, 7000000000000000009, 'by-hand');
\x on
SELECT * FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(7000000000000000001, %L, %L, 2, 60000, %L, 1, NULL, true)',
    'host-a', :'layout', :'tok_a'));
\x off
SELECT worker_id, fence
  FROM snowflake.lease_claim(7000000000000000001, 'host-a', :'layout', 2, 60000,
                             :'tok_a', 1, NULL, false);
SELECT worker_id, fence
  FROM snowflake.lease_claim(7000000000000000009, 'by-hand', :'layout', 2, 60000,
                             :'tok_b', 1, NULL, true);
SELECT * FROM pg_temp.leases();
-- and the hand registration of a leased worker id by another system is refused
SELECT message FROM pg_temp.error_of($$
    INSERT INTO snowflake.workers (worker_id, system_identifier, host)
    VALUES (0, 7000000000000000010, 'late')$$);

--
-- The guard keeps every row that records a ceiling
--
SELECT ceiling FROM snowflake.lease_renew(0, :'tok_a', 100, 60000);
\x on
SELECT * FROM pg_temp.error_of('DELETE FROM snowflake.workers WHERE worker_id = 0');
\x off
-- nor may an unexpired lease pass to another system by UPDATE
SELECT message FROM pg_temp.error_of(
    'UPDATE snowflake.workers SET system_identifier = 7000000000000000010 WHERE worker_id = 0');
SELECT count(*) AS registered FROM snowflake.workers;

--
-- Arguments
--
SELECT code, message FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(NULL, %L, %L, 2, 60000, %L, NULL, NULL, false)',
    'h', :'layout', :'tok_x'));
SELECT code, message FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(1, %L, NULL, 2, 60000, %L, NULL, NULL, false)',
    'h', :'tok_x'));
SELECT code, message FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(1, %L, %L, 2, 60000, NULL, NULL, NULL, false)',
    'h', :'layout'));
SELECT code, message FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(1, %L, %L, 2, 60000, %L, NULL, NULL, NULL)',
    'h', :'layout', :'tok_x'));
SELECT code, message, detail FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(1, %L, %L, 21, 60000, %L, NULL, NULL, false)',
    'h', :'layout', :'tok_x'));
SELECT code, message, detail FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(1, %L, %L, -1, 60000, %L, NULL, NULL, false)',
    'h', :'layout', :'tok_x'));
SELECT code, message, detail FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(1, %L, %L, 2, 999, %L, NULL, NULL, false)',
    'h', :'layout', :'tok_x'));
SELECT code, message, detail FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(1, %L, %L, 2, 86400001, %L, NULL, NULL, false)',
    'h', :'layout', :'tok_x'));
-- a configured worker id that does not fit is an error; a preferred one is
-- ignored
SELECT code, message FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(1, %L, %L, 2, 60000, %L, 4, NULL, true)',
    'h', :'layout', :'tok_x'));
SELECT code, message FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(1, %L, %L, 2, 60000, %L, -1, NULL, true)',
    'h', :'layout', :'tok_x'));
SELECT worker_id, fence
  FROM snowflake.lease_claim(7000000000000000011, 'h', :'layout', 2, 60000,
                             :'tok_x', 4, NULL, false);
-- lease_renew is strict
SELECT count(*) FROM snowflake.lease_renew(NULL, :'tok_x', 1, 1000);
SELECT count(*) FROM snowflake.lease_renew(2, NULL, 1, 1000);

--
-- Privileges: the functions are SECURITY DEFINER; a role with EXECUTE on
-- them may claim, renew and release, and still cannot write the table
--
SELECT p.proname, p.prosecdef, p.provolatile, p.proparallel, p.proisstrict,
       p.proconfig,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
  FROM pg_proc p
 WHERE p.pronamespace = 'snowflake'::regnamespace AND p.proname LIKE 'lease%'
 ORDER BY p.proname;
CREATE ROLE regress_snowflake_fleet;
CREATE ROLE regress_snowflake_other;
GRANT EXECUTE ON FUNCTION snowflake.lease_claim, snowflake.lease_renew,
    snowflake.lease_release TO regress_snowflake_fleet;
TRUNCATE snowflake.workers;
SET ROLE regress_snowflake_fleet;
SELECT worker_id, fence
  FROM snowflake.lease_claim(7000000000000000001, 'host-a', :'layout', 2, 60000,
                             :'tok_a', NULL, NULL, false);
SELECT ceiling FROM snowflake.lease_renew(0, :'tok_a', 100, 60000);
SELECT snowflake.lease_release(0, :'tok_a', 50) AS released;
SELECT worker_id, ceiling FROM snowflake.workers;
SELECT message FROM pg_temp.error_of(
    'INSERT INTO snowflake.workers (worker_id, system_identifier) VALUES (3, 1)');
SELECT message FROM pg_temp.error_of('UPDATE snowflake.workers SET ceiling = 0');
SELECT message FROM pg_temp.error_of('UPDATE snowflake.workers SET lease_expires = now()');
SELECT message FROM pg_temp.error_of('DELETE FROM snowflake.workers');
SELECT message FROM pg_temp.error_of('TRUNCATE snowflake.workers');
SET ROLE regress_snowflake_other;
SELECT message FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_claim(1, %L, %L, 2, 60000, %L, NULL, NULL, false)',
    'h', :'layout', :'tok_x'));
SELECT message FROM pg_temp.error_of(format(
    'SELECT * FROM snowflake.lease_renew(0, %L, 1, 60000)', :'tok_a'));
SELECT message FROM pg_temp.error_of(format(
    'SELECT snowflake.lease_release(0, %L, 1)', :'tok_a'));
RESET ROLE;
SELECT * FROM pg_temp.leases();
DROP OWNED BY regress_snowflake_fleet;
DROP ROLE regress_snowflake_fleet;
DROP ROLE regress_snowflake_other;

TRUNCATE snowflake.workers;
RESET DateStyle;
RESET TimeZone;
