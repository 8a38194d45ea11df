/* snowflake--1.0.sql */

\echo Use "CREATE EXTENSION snowflake" to load this file. \quit

CREATE FUNCTION snowflake_nextval()
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_nextval'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_nextval() IS
'Returns the next ID from the server''s generator: unique across the server and, with distinct worker ids, across servers; strictly increasing on one server';

CREATE FUNCTION snowflake_currval()
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_currval'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION snowflake_currval() IS
'Returns the ID that snowflake_nextval() last returned in this session';

CREATE FUNCTION snowflake_parse(id bigint,
                                OUT created_at timestamptz,
                                OUT worker_id integer,
                                OUT sequence integer)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_parse'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_parse(bigint) IS
'Splits an ID into its creation time, worker id and sequence number under the server''s layout and epoch';
