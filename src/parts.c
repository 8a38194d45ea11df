/*-------------------------------------------------------------------------
 *
 * parts.c
 *	  SQL: an ID's parts and time, and IDs from parts and times.
 *
 * IDs sort by creation time, so a primary key on a snowflake ID is also an
 * index on creation time.  The functions here split an ID into its parts
 * (snowflake_parse), turn IDs into instants (snowflake_to_timestamptz),
 * instants into ID bounds (snowflake_min_id, snowflake_max_id) and parts
 * into IDs (snowflake_compose).  They read the layout and epoch, which are
 * fixed while the server runs, so they are STABLE; a negative ID, an
 * instant outside the layout's lifetime, or a part that does not fit its
 * field, is an error, never a wrapped value.  None needs a worker id.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/timestamp.h"

#include "layout.h"

PG_FUNCTION_INFO_V1(snowflake_parse);
PG_FUNCTION_INFO_V1(snowflake_to_timestamptz);
PG_FUNCTION_INFO_V1(snowflake_min_id);
PG_FUNCTION_INFO_V1(snowflake_max_id);
PG_FUNCTION_INFO_V1(snowflake_compose_sql);

Datum
snowflake_parse(PG_FUNCTION_ARGS)
{
	int64		timestamp;
	int64		worker;
	int64		sequence;
	const SnowflakeLayout *layout = sf_decode_id(PG_GETARG_INT64(0),
												 &timestamp, &worker,
												 &sequence);
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	values[0] = TimestampTzGetDatum(sf_timestamp_to_timestamptz(layout, timestamp));
	values[1] = Int32GetDatum((int32) worker);
	values[2] = Int32GetDatum((int32) sequence);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

Datum
snowflake_to_timestamptz(PG_FUNCTION_ARGS)
{
	int64		timestamp;
	int64		worker;
	int64		sequence;
	const SnowflakeLayout *layout = sf_decode_id(PG_GETARG_INT64(0),
												 &timestamp, &worker,
												 &sequence);

	PG_RETURN_TIMESTAMPTZ(sf_timestamp_to_timestamptz(layout, timestamp));
}

/* The smallest ID any worker could issue in the millisecond of ts. */
Datum
snowflake_min_id(PG_FUNCTION_ARGS)
{
	const SnowflakeLayout *layout = sf_layout();
	int64		timestamp = sf_timestamptz_to_timestamp(layout,
														PG_GETARG_TIMESTAMPTZ(0));

	PG_RETURN_INT64(sf_compose(layout, timestamp, 0, 0));
}

/* The largest ID any worker could issue in the millisecond of ts. */
Datum
snowflake_max_id(PG_FUNCTION_ARGS)
{
	const SnowflakeLayout *layout = sf_layout();
	int64		timestamp = sf_timestamptz_to_timestamp(layout,
														PG_GETARG_TIMESTAMPTZ(0));

	PG_RETURN_INT64(sf_compose(layout, timestamp,
							   layout->max_worker,
							   layout->max_sequence));
}

/*
 * snowflake_compose(created_at, worker_id, sequence): the ID made of these
 * parts.  (Its C name is older than the rule that SQL-callable functions
 * carry their SQL name: released install scripts refer to it.)
 */
Datum
snowflake_compose_sql(PG_FUNCTION_ARGS)
{
	const SnowflakeLayout *layout = sf_layout();
	int64		timestamp = sf_timestamptz_to_timestamp(layout,
														PG_GETARG_TIMESTAMPTZ(0));
	int32		worker = PG_GETARG_INT32(1);
	int32		sequence = PG_GETARG_INT32(2);

	if (worker < 0 || worker > layout->max_worker)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("worker id %d is out of range for the snowflake layout",
						worker),
				 errdetail("With snowflake.worker_bits = %d, worker ids go from 0 to " INT64_FORMAT ".",
						   layout->worker_bits, layout->max_worker)));
	if (sequence < 0 || sequence > layout->max_sequence)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("sequence %d is out of range for the snowflake layout",
						sequence),
				 errdetail("With snowflake.sequence_bits = %d, sequence numbers go from 0 to " INT64_FORMAT ".",
						   layout->sequence_bits, layout->max_sequence)));

	PG_RETURN_INT64(sf_compose(layout, timestamp, worker, sequence));
}
