--
-- DISCARD and the session's last ID.  snowflake_currval() forgets it where
-- core currval() forgets its sequence's value (DISCARD SEQUENCES and DISCARD
-- ALL, which connection poolers run between clients), and keeps it where
-- currval() keeps it.  Each step checks the two side by side.
--
CREATE SEQUENCE discard_seq;

-- DISCARD PLANS and DISCARD TEMP keep both
SELECT nextval('discard_seq') AS seq, snowflake_nextval() AS id \gset
DISCARD PLANS;
SELECT currval('discard_seq') = :seq AS currval_kept,
       snowflake_currval() = :id AS snowflake_currval_kept;
DISCARD TEMP;
SELECT currval('discard_seq') = :seq AS currval_kept,
       snowflake_currval() = :id AS snowflake_currval_kept;

-- DISCARD SEQUENCES forgets both
DISCARD SEQUENCES;
SELECT currval('discard_seq');
SELECT snowflake_currval();

-- the next call defines them again
SELECT nextval('discard_seq') AS seq, snowflake_nextval() AS id \gset
SELECT currval('discard_seq') = :seq AS currval_defined,
       snowflake_currval() = :id AS snowflake_currval_defined;

-- DISCARD ALL forgets both
DISCARD ALL;
SELECT currval('discard_seq');
SELECT snowflake_currval();

-- ... also after the batch form
SELECT count(*) FROM snowflake_nextval(3);
SELECT snowflake_currval() IS NOT NULL AS snowflake_currval_defined;
DISCARD ALL;
SELECT snowflake_currval();

-- DISCARD ALL refuses inside a transaction block, and then forgets nothing
SELECT nextval('discard_seq') AS seq, snowflake_nextval() AS id \gset
BEGIN;
DISCARD ALL;
ROLLBACK;
SELECT currval('discard_seq') = :seq AS currval_kept,
       snowflake_currval() = :id AS snowflake_currval_kept;

-- DISCARD SEQUENCES in a transaction that rolls back: forgotten all the same
-- (like currval(), the session's last value is not transactional)
BEGIN;
DISCARD SEQUENCES;
ROLLBACK;
SELECT currval('discard_seq');
SELECT snowflake_currval();

-- run from a function (through SPI), DISCARD SEQUENCES forgets both too
SELECT nextval('discard_seq') AS seq, snowflake_nextval() AS id \gset
DO $$ BEGIN EXECUTE 'DISCARD SEQUENCES'; END $$;
SELECT currval('discard_seq');
SELECT snowflake_currval();

DROP SEQUENCE discard_seq;
