--
-- snowflake_encode and snowflake_decode: 13 characters of Crockford base32,
-- fixed width and uppercase, so that text order is numeric order.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;
SET TimeZone = 'UTC';

SELECT id, snowflake_encode(id) AS encoded,
       snowflake_decode(snowflake_encode(id)) = id AS round_trip
  FROM (VALUES (0::bigint),
               (1),
               (31),                        -- the last one-digit value
               (32),
               (1023),
               (1024),
               (4194304),
               (250099318017519616),        -- an ID issued in 2026
               (9007199254740991),          -- 2^53 - 1, the largest exact JavaScript integer
               (9007199254740993),          -- 2^53 + 1, which JavaScript cannot hold
               (1152921504606846975),       -- 2^60 - 1: first digit still 0
               (1152921504606846976),       -- 2^60: first digit 1
               (9223372036854775807)        -- 2^63 - 1
       ) v(id)
 ORDER BY id;

-- the alphabet in order: each digit value once
SELECT string_agg(right(snowflake_encode(d), 1), '' ORDER BY d) AS alphabet
  FROM generate_series(0, 31) d;

-- decoding is case-insensitive and reads O as 0, I and L as 1
SELECT snowflake_decode('06XY3Q8G00000') AS upper,
       snowflake_decode('06xy3q8g00000') AS lower,
       snowflake_decode('06Xy3Q8g0oOo0') AS mixed_with_o,
       snowflake_decode('0000000000001') AS one,
       snowflake_decode('000000000000I') AS capital_i,
       snowflake_decode('000000000000i') AS small_i,
       snowflake_decode('000000000000L') AS capital_l,
       snowflake_decode('000000000000l') AS small_l,
       snowflake_decode('7zzzzzzzzzzzz') AS largest;

-- text order is numeric order (in the C collation)
SELECT snowflake_encode(4194303) < snowflake_encode(4194304) COLLATE "C" AS a,
       snowflake_encode(31) < snowflake_encode(32) COLLATE "C" AS b,
       snowflake_encode(9223372036854775806) < snowflake_encode(9223372036854775807) COLLATE "C" AS c;

-- NULL in, NULL out
SELECT snowflake_encode(NULL) IS NULL AS a, snowflake_decode(NULL) IS NULL AS b;

-- errors: negative numbers are not IDs
SELECT snowflake_encode(-1);

-- errors: wrong length
SELECT snowflake_decode('');
SELECT snowflake_decode('000000000000');
SELECT snowflake_decode('00000000000000');
SELECT snowflake_decode(repeat('0', 26));
-- a long input is cut short in the message
SELECT snowflake_decode(repeat('0', 10000));
SELECT snowflake_decode(repeat('0', 30) || '-');

-- errors: characters that are not digits, including U, separators and
-- spaces
SELECT snowflake_decode('U000000000000');
SELECT snowflake_decode('000000-000000');
SELECT snowflake_decode(' 0000000000000');
SELECT snowflake_decode('0000000000000 ');
SELECT snowflake_decode('0*');

-- errors: above 2^63 - 1
SELECT snowflake_decode('8000000000000');
SELECT snowflake_decode('ZZZZZZZZZZZZZ');
