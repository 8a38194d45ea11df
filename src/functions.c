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
PG_FUNCTION_INFO_V1(snowflake_nextval_batch);
PG_FUNCTION_INFO_V1(snowflake_currval);
PG_FUNCTION_INFO_V1(snowflake_parse);

/*
 * The last ID snowflake_nextval() returned in this session, for
 * snowflake_currval().  Like core currval(), it is per backend and not
 * transactional, and DISCARD SEQUENCES and DISCARD ALL forget it
 * (sf_forget_currval, called from the utility hook in snowflake.c).
 */
static int64 session_last_id;
static bool session_has_id = false;

/* Forget the session's last ID: snowflake_currval() is undefined again. */
void
sf_forget_currval(void)
{
	session_has_id = false;
}

Datum
snowflake_nextval(PG_FUNCTION_ARGS)
{
	int64		id = sf_next_id();

	session_last_id = id;
	session_has_id = true;
	PG_RETURN_INT64(id);
}

/* What snowflake_nextval(n) reserved, and how far it has returned it. */
typedef struct BatchState
{
	List	   *blocks;			/* SnowflakeBlock *, in order */
	ListCell   *current;		/* the block being returned */
	int64		next;			/* index of the next ID in it */
} BatchState;

/*
 * snowflake_nextval(n): n IDs, reserved on the first call under one
 * acquisition of the generator's lock (more only where snowflake.max_drift
 * cuts the run short), then returned one row at a time.  n = 0 returns no
 * rows, but refuses wherever a call for IDs would.
 */
Datum
snowflake_nextval_batch(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;
	BatchState *batch;
	SnowflakeBlock *block;
	int64		id;

	if (SRF_IS_FIRSTCALL())
	{
		int32		n = PG_GETARG_INT32(0);
		MemoryContext oldcontext;

		if (n < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("number of snowflake IDs must not be negative"),
					 errdetail("Got %d.", n),
					 errhint("Pass how many IDs you need, or 0 for none.")));

		funcctx = SRF_FIRSTCALL_INIT();
		oldcontext = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		batch = palloc0(sizeof(BatchState));
		/* n = 0 too takes a step: the same checks, and no IDs */
		do
		{
			block = palloc(sizeof(SnowflakeBlock));
			n -= sf_reserve(n, block);
			if (block->count > 0)
				batch->blocks = lappend(batch->blocks, block);
		} while (n > 0);
		batch->current = list_head(batch->blocks);
		funcctx->user_fctx = batch;
		MemoryContextSwitchTo(oldcontext);
	}

	funcctx = SRF_PERCALL_SETUP();
	batch = funcctx->user_fctx;
	if (batch->current == NULL)
		SRF_RETURN_DONE(funcctx);

	block = lfirst(batch->current);
	id = sf_block_id(sf_layout(), block, batch->next++);
	if (batch->next == block->count)
	{
		batch->current = lnext(batch->blocks, batch->current);
		batch->next = 0;
	}

	session_last_id = id;
	session_has_id = true;
	SRF_RETURN_NEXT(funcctx, Int64GetDatum(id));
}

Datum
snowflake_currval(PG_FUNCTION_ARGS)
{
	sf_require_preload();
	if (!session_has_id)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake_currval is not yet defined in this session"),
				 errhint("Call snowflake_nextval() first.")));
	PG_RETURN_INT64(session_last_id);
}

Datum
snowflake_parse(PG_FUNCTION_ARGS)
{
	int64		id = sf_check_id(PG_GETARG_INT64(0));
	const SnowflakeLayout *layout = sf_layout();
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};
	int64		timestamp;
	int64		worker;
	int64		sequence;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	sf_check_id_fits(layout, id);
	sf_decompose(layout, id, &timestamp, &worker, &sequence);
	values[0] = TimestampTzGetDatum(sf_timestamp_to_timestamptz(layout, timestamp));
	values[1] = Int32GetDatum((int32) worker);
	values[2] = Int32GetDatum((int32) sequence);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

PG_FUNCTION_INFO_V1(snowflake_stats);
PG_FUNCTION_INFO_V1(snowflake_stats_1_2);
PG_FUNCTION_INFO_V1(snowflake_stats_1_3);
PG_FUNCTION_INFO_V1(snowflake_stats_reset);

/*
 * The columns of snowflake_stats() grew between versions of the SQL
 * objects; a database not yet updated still calls the older C function.
 */
typedef enum StatsVersion
{
	STATS_V1_1,					/* 19 columns */
	STATS_V1_2,					/* 1.1's, and largest_drift_ms after drift_ms */
	STATS_V1_3					/* 1.2's, and marks_by_callers, marks_ahead
								 * after marks_written */
} StatsVersion;

#define STATS_COLUMNS_V1_1	19
#define STATS_COLUMNS_V1_2	20
#define STATS_COLUMNS_V1_3	22

/* An int64 that may be "none" (-1) as a nullable bigint column. */
#define SET_ID_COLUMN(i, v) \
	do { \
		nulls[i] = (v) < 0; \
		values[i] = Int64GetDatum(v); \
	} while (0)

static Datum
stats_internal(FunctionCallInfo fcinfo, StatsVersion version)
{
	const SnowflakeLayout *layout = sf_layout();
	int			shift = layout->worker_bits + layout->sequence_bits;
	TupleDesc	tupdesc;
	Datum		values[STATS_COLUMNS_V1_3];
	bool		nulls[STATS_COLUMNS_V1_3];
	static const int columns[] = {
		STATS_COLUMNS_V1_1, STATS_COLUMNS_V1_2, STATS_COLUMNS_V1_3
	};
	SnowflakeStats stats;
	int64		last_id;
	int64		mark_id;
	int64		drift_ms;
	int			i = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (tupdesc->natts != columns[version])
		elog(ERROR, "snowflake_stats() has %d columns, which does not match the library; run ALTER EXTENSION snowflake UPDATE",
			 tupdesc->natts);

	sf_get_stats(&stats, &last_id, &mark_id, &drift_ms);
	memset(nulls, 0, sizeof(nulls));

	nulls[i] = snowflake_worker_id == SNOWFLAKE_WORKER_ID_UNSET;
	values[i++] = Int32GetDatum(snowflake_worker_id);
	values[i++] = TimestampTzGetDatum(layout->epoch);
	values[i++] = Int32GetDatum(layout->timestamp_bits);
	values[i++] = Int32GetDatum(layout->worker_bits);
	values[i++] = Int32GetDatum(layout->sequence_bits);
	values[i++] = TimestampTzGetDatum(sf_lifetime_end(layout));
	values[i++] = Int64GetDatum(stats.ids_issued);
	SET_ID_COLUMN(i, last_id);
	i++;
	values[i++] = Int64GetDatum(drift_ms);
	if (version >= STATS_V1_2)
		values[i++] = Int64GetDatum(stats.largest_drift_ms);
	SET_ID_COLUMN(i, mark_id);
	i++;

	/*
	 * After a change of layout or epoch the old mark may stand for an instant
	 * timestamptz cannot hold; show NULL rather than fail the whole row,
	 * which is what one looks at to diagnose such a change.
	 */
	if (mark_id < 0 || !sf_timestamp_fits(layout, mark_id >> shift))
		nulls[i] = true;
	else
		values[i] = TimestampTzGetDatum(sf_timestamp_to_timestamptz(layout, mark_id >> shift));
	i++;
	values[i++] = Int64GetDatum(stats.marks_by_callers + stats.marks_ahead);
	if (version >= STATS_V1_3)
	{
		values[i++] = Int64GetDatum(stats.marks_by_callers);
		values[i++] = Int64GetDatum(stats.marks_ahead);
	}
	values[i++] = Int64GetDatum(stats.clock_rollbacks);
	values[i++] = Int64GetDatum(stats.largest_rollback_ms);
	values[i++] = Int64GetDatum(stats.borrows);
	values[i++] = Int64GetDatum(stats.waits);
	values[i++] = Float8GetDatum(stats.wait_us / 1000.0);
	values[i++] = Int64GetDatum(stats.refusals);
	values[i++] = TimestampTzGetDatum(stats.stats_reset);
	Assert(i == tupdesc->natts);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* snowflake_stats() as version 1.1 of the SQL objects declares it */
Datum
snowflake_stats(PG_FUNCTION_ARGS)
{
	return stats_internal(fcinfo, STATS_V1_1);
}

Datum
snowflake_stats_1_2(PG_FUNCTION_ARGS)
{
	return stats_internal(fcinfo, STATS_V1_2);
}

Datum
snowflake_stats_1_3(PG_FUNCTION_ARGS)
{
	return stats_internal(fcinfo, STATS_V1_3);
}

Datum
snowflake_stats_reset(PG_FUNCTION_ARGS)
{
	sf_reset_stats();
	PG_RETURN_VOID();
}
