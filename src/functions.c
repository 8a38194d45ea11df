/*-------------------------------------------------------------------------
 *
 * functions.c
 *	  The SQL-callable functions of the snowflake extension.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/timestamp.h"

#include "snowflake.h"

PG_FUNCTION_INFO_V1(snowflake_nextval);
PG_FUNCTION_INFO_V1(snowflake_currval);
PG_FUNCTION_INFO_V1(snowflake_parse);

/* The last ID snowflake_nextval() returned in this session. */
static int64 session_last_id;
static bool session_has_id = false;

Datum
snowflake_nextval(PG_FUNCTION_ARGS)
{
	int64		id = snowflake_next_id();

	session_last_id = id;
	session_has_id = true;
	PG_RETURN_INT64(id);
}

Datum
snowflake_currval(PG_FUNCTION_ARGS)
{
	snowflake_require_preload();
	if (!session_has_id)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake_currval is not yet defined in this session"),
				 errhint("Call snowflake_nextval() first.")));
	PG_RETURN_INT64(session_last_id);
}

/* An ID argument, or an error if it is negative. */
static int64
id_argument(FunctionCallInfo fcinfo, int argno)
{
	int64		id = PG_GETARG_INT64(argno);

	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowflake ID must not be negative"),
				 errdetail("Got " INT64_FORMAT "; snowflake IDs keep bit 63 clear, so they are never negative.", id),
				 errhint("Pass an ID made by snowflake_nextval() under this server's layout.")));
	return id;
}

Datum
snowflake_parse(PG_FUNCTION_ARGS)
{
	int64		id = id_argument(fcinfo, 0);
	const SnowflakeLayout *layout = snowflake_layout();
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};
	int64		timestamp;
	int64		worker;
	int64		sequence;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	snowflake_decompose(layout, id, &timestamp, &worker, &sequence);
	values[0] = TimestampTzGetDatum(snowflake_timestamp_to_timestamptz(layout, timestamp));
	values[1] = Int32GetDatum((int32) worker);
	values[2] = Int32GetDatum((int32) sequence);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
