/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  SQL: snowflake_stats() and snowflake_stats_reset().
 *
 * One row of the settings in force, the generator's state and its counters.
 * The columns grew between versions of the SQL objects; a database not yet
 * updated still calls the older C function, so each version has its own
 * entry point over one implementation.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xlog.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "generator.h"
#include "layout.h"

PG_FUNCTION_INFO_V1(snowflake_stats);
PG_FUNCTION_INFO_V1(snowflake_stats_1_2);
PG_FUNCTION_INFO_V1(snowflake_stats_1_3);
PG_FUNCTION_INFO_V1(snowflake_stats_1_4);
PG_FUNCTION_INFO_V1(snowflake_stats_reset);

/* The versions of the SQL objects, and what each has of the columns. */
typedef enum StatsVersion
{
	STATS_V1_1,					/* 19 columns */
	STATS_V1_2,					/* 1.1's, and largest_drift_ms after drift_ms */
	STATS_V1_3,					/* 1.2's, and marks_by_callers, marks_ahead
								 * after marks_written */
	STATS_V1_4					/* 1.3's, worker_id the one in use, and the
								 * lease's seven columns at the end */
} StatsVersion;

#define STATS_COLUMNS_V1_1	19
#define STATS_COLUMNS_V1_2	20
#define STATS_COLUMNS_V1_3	22
#define STATS_COLUMNS_V1_4	29

/* The lease's state as snowflake_stats shows it. */
static const char *const lease_states[] = {
	[SNOWFLAKE_LEASE_NONE] = "none",
	[SNOWFLAKE_LEASE_CLAIMING] = "claiming",
	[SNOWFLAKE_LEASE_HELD] = "held",
	[SNOWFLAKE_LEASE_UNREACHABLE] = "registry unreachable",
	[SNOWFLAKE_LEASE_LOST] = "lost",
	[SNOWFLAKE_LEASE_REFUSED] = "refused"
};

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
	Datum		values[STATS_COLUMNS_V1_4];
	bool		nulls[STATS_COLUMNS_V1_4];
	static const int columns[] = {
		STATS_COLUMNS_V1_1, STATS_COLUMNS_V1_2, STATS_COLUMNS_V1_3,
		STATS_COLUMNS_V1_4
	};
	SnowflakeLeaseStatus lease;
	int64		worker;
	int64		ceiling;
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

	/* 1.4 shows the worker id in use, leased or configured */
	sf_get_lease(&lease, &worker, &ceiling);
	if (version < STATS_V1_4)
		worker = layout->worker_id;
	nulls[i] = worker < 0;
	values[i++] = Int32GetDatum((int32) worker);
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
	if (version >= STATS_V1_4)
	{
		bool		leased = lease.state != SNOWFLAKE_LEASE_NONE;

		/* a standby holds no lease: its keeper starts at promotion */
		values[i++] = CStringGetTextDatum(leased && RecoveryInProgress() ?
										  "standby" : lease_states[lease.state]);
		nulls[i] = lease.expires == 0;
		values[i++] = TimestampTzGetDatum(lease.expires);
		nulls[i] = !leased || worker < 0;
		values[i++] = Int64GetDatum(ceiling);
		nulls[i] = !leased || worker < 0;
		values[i++] = Int64GetDatum((ceiling >> shift) - sf_clock_ms(layout));
		values[i++] = Int64GetDatum(lease.renewals);
		values[i++] = Int64GetDatum(lease.failures);
		nulls[i] = lease.error[0] == '\0';
		values[i++] = CStringGetTextDatum(sf_lease_error_shown(&lease));
	}
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
snowflake_stats_1_4(PG_FUNCTION_ARGS)
{
	return stats_internal(fcinfo, STATS_V1_4);
}

Datum
snowflake_stats_reset(PG_FUNCTION_ARGS)
{
	sf_reset_stats();
	PG_RETURN_VOID();
}
