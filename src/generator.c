/*-------------------------------------------------------------------------
 *
 * generator.c
 *	  The server's one ID generator, in shared memory.
 *
 * Locking protocol
 * ----------------
 * One struct in shared memory holds the generator's state; the LWLock of
 * the named tranche "snowflake" protects all of it.  snowflake_next_id()
 * takes the lock exclusively, reads the wall clock, runs generator_step()
 * and releases it.  generator_step() is plain arithmetic on the state: no
 * I/O, no elog, no allocation, so the lock is held for a few dozen
 * nanoseconds.  Everything that can throw or sleep (errors, the log line for
 * a clock step, waiting for the clock) happens after the lock is released.
 *
 * Invariants, and why they hold
 * -----------------------------
 * (last_timestamp, last_sequence) is the ID issued last.  A new ID is
 * always (last_timestamp, last_sequence + 1), or a later timestamp with
 * sequence 0, and the state is updated before the lock is released; so IDs
 * strictly increase in the order callers take the lock, and no two callers
 * ever get the same ID.  The worker id is fixed for the server's life, so
 * servers with different worker ids never collide.
 *
 * The timestamp is max(wall clock, last_timestamp): a logical clock that
 * never goes backwards.  When the clock is behind the last ID (it was
 * stepped back, or a burst used up the sequence space and borrowed future
 * milliseconds), IDs continue from last_timestamp as long as they stay no
 * more than snowflake.max_drift ms ahead of the clock.  Beyond that the
 * caller waits for the clock outside the lock if it will catch up within
 * snowflake.max_wait, and otherwise gets an error.  No ID is ever issued
 * with a timestamp past the layout's lifetime.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "snowflake.h"

/* The generator's state, in shared memory. */
typedef struct SnowflakeState
{
	LWLock	   *lock;			/* protects every field below */
	int64		last_timestamp; /* timestamp field of the last ID, or -1 */
	int64		last_sequence;	/* sequence field of the last ID */
	int64		last_clock;		/* the clock at the previous call, to notice
								 * it stepping back */
} SnowflakeState;

/* What one locked step decided. */
typedef enum SnowflakeStep
{
	STEP_ISSUED,				/* an ID was issued */
	STEP_TOO_FAR_AHEAD,			/* the ID would pass max_drift */
	STEP_BEFORE_EPOCH,			/* the clock reads before the epoch */
	STEP_LIFETIME_ENDED			/* the timestamp field is used up */
} SnowflakeStep;

static SnowflakeState *state = NULL;

Size
snowflake_shmem_size(void)
{
	return MAXALIGN(sizeof(SnowflakeState));
}

/*
 * Attach to (or create) the shared state.  Called from the shmem startup
 * hook with AddinShmemInitLock held; after a crash restart shared memory is
 * new, and so is the state.
 */
void
snowflake_shmem_init(void)
{
	bool		found;

	state = ShmemInitStruct("snowflake", snowflake_shmem_size(), &found);
	if (!found)
	{
		state->lock = &(GetNamedLWLockTranche("snowflake"))->lock;
		state->last_timestamp = -1;
		state->last_sequence = 0;
		state->last_clock = PG_INT64_MIN;
	}
}

/*
 * One step of the generator, with the lock held and "now" read under it.
 *
 * On STEP_ISSUED, *timestamp and *sequence are the new ID's fields; on
 * STEP_TOO_FAR_AHEAD, *excess is how many ms the clock must advance before
 * a retry can succeed.  *stepped_back is set to how far the clock went back
 * since the previous call (0 if it did not), for the caller to log once.
 */
static SnowflakeStep
generator_step(const SnowflakeLayout *layout, int64 now, int64 max_drift,
			   int64 *timestamp, int64 *sequence, int64 *excess,
			   int64 *stepped_back)
{
	int64		ts;
	int64		seq;

	*stepped_back = now < state->last_clock ? state->last_clock - now : 0;
	state->last_clock = now;

	if (now < 0)
		return STEP_BEFORE_EPOCH;

	if (now > state->last_timestamp)
	{
		ts = now;
		seq = 0;
	}
	else if (state->last_sequence < layout->max_sequence)
	{
		ts = state->last_timestamp;
		seq = state->last_sequence + 1;
	}
	else
	{
		/* this millisecond is used up: borrow the next one */
		ts = state->last_timestamp + 1;
		seq = 0;
	}

	if (ts - now > max_drift)
	{
		*excess = ts - now - max_drift;
		return STEP_TOO_FAR_AHEAD;
	}
	if (ts > layout->max_timestamp)
		return STEP_LIFETIME_ENDED;

	state->last_timestamp = ts;
	state->last_sequence = seq;
	*timestamp = ts;
	*sequence = seq;
	return STEP_ISSUED;
}

/* The worker id, or an error if it is unset or does not fit the layout. */
static int64
checked_worker_id(const SnowflakeLayout *layout)
{
	if (snowflake_worker_id == SNOWFLAKE_WORKER_ID_UNSET)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake.worker_id is not set"),
				 errdetail("Each server that generates IDs needs a worker id of its own; an invalid value in postgresql.conf is ignored with a warning in the server log."),
				 errhint("Set snowflake.worker_id to a number from 0 to " INT64_FORMAT " that no other server uses, in postgresql.conf, and restart the server.",
						 layout->max_worker)));
	if (snowflake_worker_id > layout->max_worker)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("snowflake.worker_id %d does not fit in snowflake.worker_bits = %d",
						snowflake_worker_id, layout->worker_bits),
				 errdetail("With %d worker bits, worker ids go from 0 to " INT64_FORMAT ".",
						   layout->worker_bits, layout->max_worker),
				 errhint("Change snowflake.worker_id or snowflake.worker_bits in postgresql.conf and restart the server.")));
	return snowflake_worker_id;
}

static void
report_before_epoch(const SnowflakeLayout *layout)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("system clock is before snowflake.epoch"),
			 errdetail("snowflake.epoch is %s, and the clock reads %s.",
					   timestamptz_to_str(layout->epoch),
					   timestamptz_to_str(GetCurrentTimestamp())),
			 errhint("Fix the system clock, or set snowflake.epoch to an instant in the past in postgresql.conf and restart the server.")));
}

static void
report_lifetime_ended(const SnowflakeLayout *layout)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("snowflake layout has run out of timestamps"),
			 errdetail("With %d timestamp bits and snowflake.epoch %s, the last millisecond an ID can carry is %s.",
					   layout->timestamp_bits,
					   timestamptz_to_str(layout->epoch),
					   timestamptz_to_str(snowflake_timestamp_to_timestamptz(layout, layout->max_timestamp))),
			 errhint("A new epoch or layout changes the meaning of every ID: plan it as a migration.")));
}

/*
 * Sleep for the clock to catch up by "ms" milliseconds, without the lock.
 * Cancellable, and ends with the server.
 */
static void
wait_for_clock(int64 ms)
{
	(void) WaitLatch(MyLatch,
					 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 (long) ms, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

/*
 * Issue the next ID.  Raises an error if the settings are unusable, or the
 * clock is so far behind that the ID would break snowflake.max_drift even
 * after waiting snowflake.max_wait.
 */
int64
snowflake_next_id(void)
{
	const SnowflakeLayout *layout = snowflake_layout();
	int64		worker = checked_worker_id(layout);
	TimestampTz wait_started = 0;

	Assert(state != NULL);

	for (;;)
	{
		SnowflakeStep step;
		int64		timestamp = 0;
		int64		sequence = 0;
		int64		excess = 0;
		int64		stepped_back;
		int64		waited;

		LWLockAcquire(state->lock, LW_EXCLUSIVE);
		step = generator_step(layout, snowflake_clock_ms(layout),
							  snowflake_max_drift,
							  &timestamp, &sequence, &excess, &stepped_back);
		LWLockRelease(state->lock);

		if (stepped_back > 0)
			ereport(LOG,
					(errmsg("snowflake: system clock moved back by " INT64_FORMAT " ms",
							stepped_back),
					 errdetail("IDs continue from the last issued timestamp while it stays within snowflake.max_drift (%d ms) of the clock.",
							   snowflake_max_drift)));

		switch (step)
		{
			case STEP_ISSUED:
				return snowflake_compose(layout, timestamp, worker, sequence);

			case STEP_TOO_FAR_AHEAD:
				if (wait_started == 0)
					wait_started = GetCurrentTimestamp();
				waited = (GetCurrentTimestamp() - wait_started) / 1000;
				if (waited + excess > snowflake_max_wait)
					ereport(ERROR,
							(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
							 errmsg("system clock is too far behind the last snowflake ID"),
							 errdetail("The next ID would be " INT64_FORMAT " ms ahead of the clock, more than snowflake.max_drift (%d ms) allows, and the clock would not catch up within snowflake.max_wait (%d ms).",
									   excess + snowflake_max_drift,
									   snowflake_max_drift, snowflake_max_wait),
							 errhint("Check the system clock and its time synchronization; to keep issuing IDs while it catches up, raise snowflake.max_drift and reload.")));
				wait_for_clock(excess);
				break;

			case STEP_BEFORE_EPOCH:
				report_before_epoch(layout);
				break;

			case STEP_LIFETIME_ENDED:
				report_lifetime_ended(layout);
				break;
		}
	}
}
