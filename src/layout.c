/*-------------------------------------------------------------------------
 *
 * layout.c
 *	  The bit layout of an ID and its epoch: validation and encoding.
 *
 * The layout settings are PGC_POSTMASTER, so a backend validates them once,
 * on first use, and keeps the result.  Validation here covers what does not
 * depend on the clock (the epoch parses, the timestamp field is wide
 * enough); whether the clock lies inside the layout's lifetime is checked by
 * the generator each time it reads the clock.
 *
 * Ranges, and why:
 *	worker_bits		0..20	0 means a single server; 20 allows a million
 *	sequence_bits	1..22	at least one ID per millisecond
 *	timestamp bits	>= 35	what is left of 63 bits; 35 bits of milliseconds
 *							last about 1.09 years, 41 bits (the default)
 *							about 69.7 years
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "snowflake.h"

/*
 * Parse an epoch string without throwing, so that GUC check hooks can use
 * it.  Accepts a date and time (with a zone offset, or in the server's
 * TimeZone), in whole milliseconds.  On failure, sets *problem to a
 * sentence for errdetail and returns false.
 */
bool
snowflake_parse_epoch(const char *str, TimestampTz *result,
					  const char **problem)
{
	char		workbuf[MAXDATELEN + MAXDATEFIELDS];
	char	   *field[MAXDATEFIELDS];
	int			ftype[MAXDATEFIELDS];
	int			nf;
	int			dtype;
	int			tz;
	struct pg_tm tt;
	fsec_t		fsec;

	if (ParseDateTime(str, workbuf, sizeof(workbuf), field, ftype,
					  MAXDATEFIELDS, &nf) != 0 ||
		compat_DecodeDateTime(field, ftype, nf, &dtype, &tt, &fsec, &tz) != 0)
	{
		*problem = "It is not a valid timestamp with time zone; write it like 2025-01-01 00:00:00+00.";
		return false;
	}
	if (dtype != DTK_DATE)
	{
		*problem = "Special values such as now, epoch and infinity are not allowed; write an instant like 2025-01-01 00:00:00+00.";
		return false;
	}
	if (tm2timestamp(&tt, fsec, &tz, result) != 0 || !IS_VALID_TIMESTAMP(*result))
	{
		*problem = "It is outside the range of timestamp with time zone.";
		return false;
	}
	if (*result % 1000 != 0)
	{
		*problem = "The epoch must be a whole number of milliseconds.";
		return false;
	}
	return true;
}

/*
 * Refuse politely when the library was not preloaded: without it there are
 * no settings and no shared generator.
 */
void
snowflake_require_preload(void)
{
	if (!snowflake_preloaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake must be loaded via shared_preload_libraries"),
				 errdetail("The generator and its settings live in shared memory, which is set up only when the server starts."),
				 errhint("Add snowflake to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/*
 * The server's layout, validated.  Raises an error if the library was not
 * preloaded or the settings cannot describe a usable layout.
 */
const SnowflakeLayout *
snowflake_layout(void)
{
	static SnowflakeLayout layout;
	static bool valid = false;
	TimestampTz epoch;
	const char *problem;
	int			timestamp_bits;

	if (valid)
		return &layout;

	snowflake_require_preload();

	/*
	 * The check hook lets an invalid epoch in postgresql.conf through at
	 * server start (see snowflake.c), so that it lands here rather than
	 * being silently replaced by the default.
	 */
	if (!snowflake_parse_epoch(snowflake_epoch, &epoch, &problem))
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("invalid value for snowflake.epoch: \"%s\"",
						snowflake_epoch),
				 errdetail_internal("%s", problem),
				 errhint("Fix snowflake.epoch in postgresql.conf and restart the server.")));

	timestamp_bits = 63 - snowflake_worker_bits - snowflake_sequence_bits;
	if (timestamp_bits < SNOWFLAKE_MIN_TIMESTAMP_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("snowflake layout leaves too few bits for the timestamp"),
				 errdetail("snowflake.worker_bits = %d and snowflake.sequence_bits = %d leave %d of the 63 bits for the timestamp; at least %d are needed.",
						   snowflake_worker_bits, snowflake_sequence_bits,
						   timestamp_bits, SNOWFLAKE_MIN_TIMESTAMP_BITS),
				 errhint("Lower snowflake.worker_bits or snowflake.sequence_bits in postgresql.conf and restart the server.")));

	layout.timestamp_bits = timestamp_bits;
	layout.worker_bits = snowflake_worker_bits;
	layout.sequence_bits = snowflake_sequence_bits;
	layout.epoch = epoch;
	layout.max_timestamp = (INT64CONST(1) << timestamp_bits) - 1;
	layout.max_worker = (INT64CONST(1) << snowflake_worker_bits) - 1;
	layout.max_sequence = (INT64CONST(1) << snowflake_sequence_bits) - 1;
	valid = true;
	return &layout;
}

/*
 * The wall clock in milliseconds since the epoch, rounded down; negative
 * before the epoch.  Called with the generator's lock held: it must stay a
 * plain clock read.
 */
int64
snowflake_clock_ms(const SnowflakeLayout *layout)
{
	int64		us = GetCurrentTimestamp() - layout->epoch;

	return us >= 0 ? us / 1000 : -((-us + 999) / 1000);
}

int64
snowflake_compose(const SnowflakeLayout *layout, int64 timestamp,
				  int64 worker, int64 sequence)
{
	Assert(timestamp >= 0 && timestamp <= layout->max_timestamp);
	Assert(worker >= 0 && worker <= layout->max_worker);
	Assert(sequence >= 0 && sequence <= layout->max_sequence);

	return (timestamp << (layout->worker_bits + layout->sequence_bits)) |
		(worker << layout->sequence_bits) |
		sequence;
}

void
snowflake_decompose(const SnowflakeLayout *layout, int64 id,
					int64 *timestamp, int64 *worker, int64 *sequence)
{
	Assert(id >= 0);

	*timestamp = id >> (layout->worker_bits + layout->sequence_bits);
	*worker = (id >> layout->sequence_bits) & layout->max_worker;
	*sequence = id & layout->max_sequence;
}

/*
 * The instant a timestamp field stands for.  Wide layouts can hold
 * timestamps beyond PostgreSQL's range; those raise an error.
 */
TimestampTz
snowflake_timestamp_to_timestamptz(const SnowflakeLayout *layout,
								   int64 timestamp)
{
	Assert(timestamp >= 0);

	if (timestamp > (END_TIMESTAMP - 1 - layout->epoch) / 1000)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("snowflake timestamp " INT64_FORMAT " is out of range for timestamp with time zone",
						timestamp),
				 errdetail("It lies beyond the last instant PostgreSQL can represent.")));

	return layout->epoch + timestamp * 1000;
}
