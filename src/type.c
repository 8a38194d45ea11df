/*-------------------------------------------------------------------------
 *
 * type.c
 *	  SQL: the column type snowflake, a bigint that JSON writes as a string.
 *
 * A snowflake is a bigint from 0 to 2^63 - 1 under another type OID: 8
 * bytes, passed by value, its text form int8's decimal and its binary form
 * int8's eight bytes.  The install script gives it no operators of its own:
 * a binary-coercible implicit cast to bigint lends it all of bigint's, and
 * btree and hash indexes, sorting, grouping, foreign keys and partitioning
 * use bigint's operator classes through that cast, as varchar uses text's.
 *
 * What the other OID is for: to_json() and the rest write a type they do
 * not know, with no cast to json, as a JSON string of its text output, where
 * a bigint becomes a JSON number that JavaScript rounds above 2^53.
 *
 * Every way in refuses a negative number (no snowflake ID is negative):
 * text input, binary input, and the casts from the integer types.  None
 * reads the layout settings: a value is any non-negative bigint, so that a
 * dump restores on any server, and these functions are IMMUTABLE and work
 * without the library preloaded.  Bad text input is an error that a caller
 * can catch softly (pg_input_is_valid, COPY ... ON_ERROR) on PostgreSQL 16
 * and later.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"

#include "compat.h"

PG_FUNCTION_INFO_V1(snowflake_in);
PG_FUNCTION_INFO_V1(snowflake_out);
PG_FUNCTION_INFO_V1(snowflake_recv);
PG_FUNCTION_INFO_V1(snowflake_send);
PG_FUNCTION_INFO_V1(snowflake_from_bigint);
PG_FUNCTION_INFO_V1(snowflake_from_integer);
PG_FUNCTION_INFO_V1(snowflake_from_smallint);

/* What every refusal of a negative number says after its message. */
#define NEGATIVE_DETAIL \
	"A snowflake is a bigint from 0 to 9223372036854775807: snowflake IDs are never negative."
#define NEGATIVE_HINT \
	"Keep negative numbers in a bigint column."

/*
 * A number from a cast or from binary input, refused if negative.  (Text
 * input says the same about the text it was given.)
 */
static Datum
checked_value(int64 value)
{
	if (value < 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("value " INT64_FORMAT " is out of range for type snowflake",
						value),
				 errdetail(NEGATIVE_DETAIL),
				 errhint(NEGATIVE_HINT)));
	return Int64GetDatum(value);
}

/*
 * Text in: int8in's grammar and its errors (on 16 and later they are soft
 * when the caller asks), then no negative number.
 */
Datum
snowflake_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	Datum		result = int8in(fcinfo);

	if (SOFT_ERROR_OCCURRED(fcinfo->context))
		return result;
	if (DatumGetInt64(result) < 0)
		ereturn(fcinfo->context, (Datum) 0,
				errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				errmsg("value \"%s\" is out of range for type snowflake", str),
				errdetail(NEGATIVE_DETAIL),
				errhint(NEGATIVE_HINT));
	return result;
}

/* Text out: int8's. */
Datum
snowflake_out(PG_FUNCTION_ARGS)
{
	return int8out(fcinfo);
}

/* Binary in: int8's eight bytes, then no negative number. */
Datum
snowflake_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);

	return checked_value(pq_getmsgint64(buf));
}

/* Binary out: int8's. */
Datum
snowflake_send(PG_FUNCTION_ARGS)
{
	return int8send(fcinfo);
}

/* The casts from bigint, integer and smallint. */
Datum
snowflake_from_bigint(PG_FUNCTION_ARGS)
{
	return checked_value(PG_GETARG_INT64(0));
}

Datum
snowflake_from_integer(PG_FUNCTION_ARGS)
{
	return checked_value((int64) PG_GETARG_INT32(0));
}

Datum
snowflake_from_smallint(PG_FUNCTION_ARGS)
{
	return checked_value((int64) PG_GETARG_INT16(0));
}
