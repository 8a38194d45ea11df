--
-- The column type's text input reports bad input softly where PostgreSQL
-- can (16 and later): pg_input_is_valid() and pg_input_error_info() see a
-- refusal without an error, and COPY ... ON_ERROR ignore (17 and later)
-- skips the row.  PostgreSQL 15 has none of these: type_soft_errors_1.out.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;

SELECT input, pg_input_is_valid(input, 'snowflake') AS valid
  FROM (VALUES ('250592571728859136'), ('-1'), ('abc'), ('9223372036854775808')) v(input);
SELECT * FROM pg_input_error_info('-1', 'snowflake');
SELECT * FROM pg_input_error_info('abc', 'snowflake');

CREATE TABLE soft (id snowflake PRIMARY KEY, note text);
COPY soft FROM STDIN WITH (ON_ERROR ignore);
250592571728859136	kept
-1	skipped: negative
abc	skipped: not a number
250592571728859137	kept too
\.
SELECT * FROM soft ORDER BY id;
DROP TABLE soft;
