--
-- The idempotency recipes of docs/idempotency.md, run as written: the
-- statements below are the guide's, prepared with the parameters an
-- application would bind.  The last query lists, for every SQL block of
-- the guide, which of this file, specs/idempotency_concurrent.spec and
-- t/205_idempotency_crash.pl hold it as it is, so that neither the guide
-- nor a test can drift from the other.
--
-- IDs and tokens differ from run to run: the test prints what it checks
-- about them (how many rows a statement consumed, whether two values are
-- equal), never the values, and errors without their detail (which would
-- show the failing row).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;
SET TimeZone = 'UTC';
\set VERBOSITY terse

--
-- Server-issued tokens
--
CREATE TABLE idempotency_tokens (
    id          bigint PRIMARY KEY DEFAULT snowflake_nextval(),
    account_id  bigint NOT NULL
);

-- the business table of the examples
CREATE TABLE orders (
    id          bigint PRIMARY KEY DEFAULT snowflake_nextval(),
    account_id  bigint NOT NULL,
    item        text NOT NULL
);

PREPARE issue_token(bigint) AS
INSERT INTO idempotency_tokens (account_id) VALUES ($1)
RETURNING snowflake_encode(id) AS token;

PREPARE consume_token(text, bigint) AS
DELETE FROM idempotency_tokens
 WHERE id = snowflake_decode($1)
   AND account_id = $2
   AND id >= snowflake_min_id(now() - interval '1 hour')
RETURNING id;

PREPARE place_order(bigint, text) AS
INSERT INTO orders (account_id, item) VALUES ($1, $2) RETURNING id;

PREPARE consume_and_place_order(text, bigint, text) AS
WITH token AS (
    DELETE FROM idempotency_tokens
     WHERE id = snowflake_decode($1)
       AND account_id = $2
       AND id >= snowflake_min_id(now() - interval '1 hour')
    RETURNING id
)
INSERT INTO orders (account_id, item)
SELECT $2, $3 FROM token
RETURNING id;

PREPARE prune_tokens AS
DELETE FROM idempotency_tokens
 WHERE id < snowflake_min_id(now() - interval '1 hour');

-- issue: the token is the row's ID in 13 characters of base32
EXECUTE issue_token(42) \gset
SELECT length(:'token') AS token_length,
       snowflake_decode(:'token') = (SELECT id FROM idempotency_tokens WHERE account_id = 42) AS token_is_the_id,
       snowflake_decode(lower(:'token')) = snowflake_decode(:'token') AS either_case;

-- a transaction that consumes the token and then rolls back leaves it usable
BEGIN;
EXECUTE consume_token(:'token', 42) \gset consumed_
SELECT :consumed_id = snowflake_decode(:'token') AS consumed_this_token;
EXECUTE place_order(42, 'book') \g /dev/null
ROLLBACK;
SELECT count(*) AS tokens_left FROM idempotency_tokens WHERE id = snowflake_decode(:'token');
SELECT count(*) AS orders FROM orders;

-- ... and so does one that fails in the business work (item must not be NULL)
BEGIN;
EXECUTE consume_token(:'token', 42) \g /dev/null
\echo consumed :ROW_COUNT
EXECUTE place_order(42, NULL) \g /dev/null
ROLLBACK;
SELECT count(*) AS tokens_left FROM idempotency_tokens WHERE id = snowflake_decode(:'token');

-- another account cannot consume it, and a token that is not base32 is an
-- error (the client's: answer 400)
EXECUTE consume_token(:'token', 43) \g /dev/null
\echo consumed :ROW_COUNT
EXECUTE consume_token('not a token', 42) \g /dev/null

-- consumed and committed with the work: exactly once
BEGIN;
EXECUTE consume_token(:'token', 42) \g /dev/null
\echo consumed :ROW_COUNT
EXECUTE place_order(42, 'book') \g /dev/null
COMMIT;
EXECUTE consume_token(:'token', 42) \g /dev/null
\echo consumed :ROW_COUNT
SELECT count(*) AS orders FROM orders;

-- the same in one statement: no token, no order
EXECUTE issue_token(42) \gset
EXECUTE consume_and_place_order(:'token', 42, 'pen') \g /dev/null
\echo placed :ROW_COUNT
EXECUTE consume_and_place_order(:'token', 42, 'pen') \g /dev/null
\echo placed :ROW_COUNT
SELECT item, count(*) AS orders FROM orders GROUP BY item ORDER BY item;

-- expiry by the ID's own time: a token issued an hour and a second ago is
-- refused (built with snowflake_compose, as the generator would have made
-- it then)
INSERT INTO idempotency_tokens (id, account_id)
VALUES (snowflake_compose(now() - interval '1 hour 1 second', 1, 0), 42)
RETURNING snowflake_encode(id) AS token \gset
EXECUTE consume_token(:'token', 42) \g /dev/null
\echo consumed :ROW_COUNT
SELECT count(*) AS tokens_left FROM idempotency_tokens WHERE id = snowflake_decode(:'token');

-- the limit to the millisecond, within one transaction (one now()): a token
-- of the millisecond an hour before now() is still valid, one of the
-- millisecond before that is not, and the prune deletes exactly the
-- tokens the consume refuses
BEGIN;
INSERT INTO idempotency_tokens (id, account_id) VALUES
    (snowflake_compose(now() - interval '1 hour', 0, 0), 7),
    (snowflake_compose(now() - interval '1 hour 1 millisecond', 1023, 4095), 7),
    (snowflake_compose(now() - interval '30 minutes', 5, 0), 7);
SELECT date_trunc('milliseconds', now()) - snowflake_to_timestamptz(id) AS age,
       id >= snowflake_min_id(now() - interval '1 hour') AS valid,
       id < snowflake_min_id(now() - interval '1 hour') AS prunable
  FROM idempotency_tokens WHERE account_id = 7 ORDER BY id;
EXECUTE prune_tokens;
SELECT date_trunc('milliseconds', now()) - snowflake_to_timestamptz(id) AS age_of_those_left
  FROM idempotency_tokens WHERE account_id = 7 ORDER BY id;
SELECT snowflake_encode(snowflake_compose(now() - interval '1 hour', 0, 0)) AS token \gset
EXECUTE consume_token(:'token', 7) \g /dev/null
\echo consumed :ROW_COUNT
COMMIT;
-- the prune also took the expired token above
SELECT count(*) AS expired_left
  FROM idempotency_tokens WHERE id < snowflake_min_id(now() - interval '1 hour');

-- EXPLAIN (COSTS OFF) of a prepared statement, planned afresh under the
-- current settings (EXPLAIN EXECUTE would show the plan cached when it
-- last ran), printed the same on every major: PostgreSQL 18 adds
-- "Disabled: true" under a node that an enable_* setting discourages
CREATE FUNCTION explain_prepared(name text) RETURNS SETOF text
LANGUAGE plpgsql AS $f$
DECLARE
    query   text;
    line    text;
BEGIN
    SELECT regexp_replace(statement, '^PREPARE \S+ AS\s+', '') INTO STRICT query
      FROM pg_prepared_statements p WHERE p.name = explain_prepared.name;
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        CONTINUE WHEN line ~ '^\s*Disabled: true$';
        RETURN NEXT line;
    END LOOP;
END
$f$;

-- pruning is a range scan of the primary key
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT * FROM explain_prepared('prune_tokens') AS "QUERY PLAN";
RESET enable_seqscan;
RESET enable_bitmapscan;

-- ... which the planner chooses by itself when, as usual, few of the
-- tokens have expired: 100000 tokens issued over the last 50 minutes and
-- 1000 more than two hours ago (with worker ids other than this server's,
-- so that they cannot collide with the IDs it issued).  The bound is
-- computed when the statement runs, but the planner estimates it from
-- now(), so it sees how few rows match.
INSERT INTO idempotency_tokens (id, account_id)
SELECT snowflake_compose(now() - g * interval '30 milliseconds', 2, g % 4096), g
  FROM generate_series(1, 100000) g;
INSERT INTO idempotency_tokens (id, account_id)
SELECT snowflake_compose(now() - interval '2 hours' - g * interval '1 millisecond', 3, 0), g
  FROM generate_series(1, 1000) g;
ANALYZE idempotency_tokens;
SELECT bool_or(p ~ 'Index Scan (using|on) idempotency_tokens_pkey') AS uses_primary_key,
       bool_or(p ~ 'Seq Scan') AS scans_table
  FROM explain_prepared('prune_tokens') p;
EXECUTE prune_tokens;
\echo pruned :ROW_COUNT
SELECT count(*) AS tokens_left FROM idempotency_tokens;

--
-- Client-supplied keys with a stored response
--
CREATE TABLE idempotency_keys (
    id           bigint PRIMARY KEY DEFAULT snowflake_nextval(),
    account_id   bigint NOT NULL,
    key          text NOT NULL,
    fingerprint  bytea NOT NULL,
    status       integer,
    body         jsonb,
    UNIQUE (account_id, key)
);

PREPARE claim_key(bigint, text, text) AS
INSERT INTO idempotency_keys (account_id, key, fingerprint)
VALUES ($1, $2, sha256(convert_to($3, 'UTF8')))
ON CONFLICT (account_id, key) DO NOTHING
RETURNING id;

PREPARE store_response(bigint, integer, jsonb) AS
UPDATE idempotency_keys SET status = $2, body = $3 WHERE id = $1;

PREPARE stored_response(bigint, text, text) AS
SELECT fingerprint = sha256(convert_to($3, 'UTF8')) AS same_request, status, body
  FROM idempotency_keys
 WHERE account_id = $1 AND key = $2;

PREPARE prune_keys AS
DELETE FROM idempotency_keys
 WHERE id < snowflake_min_id(now() - interval '24 hours');

-- the first request with a key claims it, does the work and stores the
-- response, all in one transaction
BEGIN;
EXECUTE claim_key(42, 'k-1', 'POST /orders {"item":"lamp"}') \gset key_
EXECUTE place_order(42, 'lamp') \g /dev/null
EXECUTE store_response(:key_id, 201, '{"item": "lamp"}');
COMMIT;

-- a retry claims nothing and gets the stored response; the same key with
-- another request is told so (answer 422)
EXECUTE claim_key(42, 'k-1', 'POST /orders {"item":"lamp"}') \g /dev/null
\echo claimed :ROW_COUNT
EXECUTE stored_response(42, 'k-1', 'POST /orders {"item":"lamp"}');
EXECUTE stored_response(42, 'k-1', 'POST /orders {"item":"sofa"}');
-- another account's key of the same name is another key
EXECUTE claim_key(43, 'k-1', 'POST /orders {"item":"lamp"}') \g /dev/null
\echo claimed :ROW_COUNT

-- a rollback takes the key with it: the retry is processed anew
BEGIN;
EXECUTE claim_key(42, 'k-2', 'POST /orders {"item":"desk"}') \g /dev/null
\echo claimed :ROW_COUNT
EXECUTE place_order(42, NULL) \g /dev/null
ROLLBACK;
EXECUTE stored_response(42, 'k-2', 'POST /orders {"item":"desk"}');
BEGIN;
EXECUTE claim_key(42, 'k-2', 'POST /orders {"item":"desk"}') \gset key_
EXECUTE place_order(42, 'desk') \g /dev/null
EXECUTE store_response(:key_id, 201, '{"item": "desk"}');
COMMIT;
EXECUTE stored_response(42, 'k-2', 'POST /orders {"item":"desk"}');

-- a refusal that is the answer (the business said no) is committed as the
-- response, without the work
BEGIN;
EXECUTE claim_key(42, 'k-3', 'POST /orders {"item":"yacht"}') \gset key_
EXECUTE store_response(:key_id, 402, '{"error": "payment declined"}');
COMMIT;
EXECUTE claim_key(42, 'k-3', 'POST /orders {"item":"yacht"}') \g /dev/null
\echo claimed :ROW_COUNT
EXECUTE stored_response(42, 'k-3', 'POST /orders {"item":"yacht"}');
SELECT item, count(*) AS orders FROM orders GROUP BY item ORDER BY item;

-- expiry is pruning: a key first seen more than 24 hours ago is deleted
-- by the prune, and the same key is then a new request
INSERT INTO idempotency_keys (id, account_id, key, fingerprint, status, body)
VALUES (snowflake_compose(now() - interval '24 hours 1 second', 1, 0), 42, 'k-old',
        sha256(convert_to('POST /orders {"item":"chair"}', 'UTF8')), 201, '{"item": "chair"}');
EXECUTE prune_keys;
\echo pruned :ROW_COUNT
EXECUTE claim_key(42, 'k-old', 'POST /orders {"item":"chair"}') \g /dev/null
\echo claimed :ROW_COUNT
SELECT key, status FROM idempotency_keys ORDER BY key, account_id;

SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT * FROM explain_prepared('prune_keys') AS "QUERY PLAN";
RESET enable_seqscan;
RESET enable_bitmapscan;

-- the lock that tells a concurrent duplicate to come back later (answer
-- 409): a transaction-scoped advisory lock, released at commit or rollback
PREPARE lock_key(bigint, text) AS
SELECT pg_try_advisory_xact_lock(hashtextextended($1::text || '/' || $2, 0));
BEGIN;
EXECUTE lock_key(42, 'k-4');
SELECT count(*) AS advisory_locks_held FROM pg_locks
 WHERE locktype = 'advisory' AND pid = pg_backend_pid();
COMMIT;
SELECT count(*) AS advisory_locks_held FROM pg_locks
 WHERE locktype = 'advisory' AND pid = pg_backend_pid();

DEALLOCATE ALL;
DROP FUNCTION explain_prepared(text);
DROP TABLE idempotency_keys;
DROP TABLE idempotency_tokens;
DROP TABLE orders;

--
-- Every SQL block of the guide is in the tests, as it is (comments and
-- spacing aside): for each block in the guide's order, its first line and
-- which test files hold it.  A block changed in the guide, or in one of
-- the tests only, changes this table.
--
\getenv abs_srcdir PG_ABS_SRCDIR
\set guide :abs_srcdir '/docs/idempotency.md'
\set regress :abs_srcdir '/sql/idempotency.sql'
\set spec :abs_srcdir '/specs/idempotency_concurrent.spec'
\set tap :abs_srcdir '/t/205_idempotency_crash.pl'
CREATE FUNCTION pg_temp.normalized(t text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
SELECT btrim(regexp_replace(regexp_replace(t, '--[^\n]*', '', 'g'), '\s+', ' ', 'g'))
$$;
WITH tests AS (
    SELECT pg_temp.normalized(pg_read_file(:'regress')) AS regress,
           pg_temp.normalized(pg_read_file(:'spec')) AS spec,
           pg_temp.normalized(pg_read_file(:'tap')) AS tap
), blocks AS (
    SELECT n, pg_temp.normalized(m[1]) AS block, split_part(m[1], E'\n', 1) AS first_line
      FROM regexp_matches(pg_read_file(:'guide'), '```sql\n(.*?)```', 'g') WITH ORDINALITY AS b(m, n)
)
SELECT n, first_line,
       strpos(regress, block) > 0 AS in_regress,
       strpos(spec, block) > 0 AS in_spec,
       strpos(tap, block) > 0 AS in_tap
  FROM blocks, tests
 ORDER BY n;
