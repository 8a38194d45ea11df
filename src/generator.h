/*-------------------------------------------------------------------------
 *
 * generator.h
 *	  The server's one ID generator (generator.c): what the SQL functions,
 *	  the mark and the mark writer use of it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_GENERATOR_H
#define SNOWFLAKE_GENERATOR_H

#include "storage/latch.h"

#include "layout.h"

/* Counters shown by snowflake_stats(), kept in shared memory. */
typedef struct SnowflakeStats
{
	int64		ids_issued;
	int64		marks_by_callers;	/* written by a call that crossed the mark */
	int64		marks_ahead;	/* written ahead of need by the mark writer */
	int64		largest_drift_ms;
	int64		clock_rollbacks;
	int64		largest_rollback_ms;
	int64		borrows;
	int64		waits;
	int64		wait_us;
	int64		refusals;
	TimestampTz stats_reset;
} SnowflakeStats;

/*
 * A run of IDs reserved under one acquisition of the generator's lock, as
 * positions (timestamp << sequence_bits | sequence) for one worker id.
 */
typedef struct SnowflakeBlock
{
	int64		first;
	int64		count;
	int64		worker;
} SnowflakeBlock;

/* Issuing IDs */
extern int64 sf_reserve(int64 n, SnowflakeBlock *block,
						int64 *wait_started);
extern void sf_check_batch(int64 n);
extern int64 sf_block_id(const SnowflakeLayout *layout,
						 const SnowflakeBlock *block, int64 i);
extern int64 sf_next_id(void);

/* Monitoring */
extern void sf_get_stats(SnowflakeStats *stats, int64 *last_id,
						 int64 *mark_id, int64 *drift_ms);
extern void sf_reset_stats(void);

/* WAL redo of a mark (mark.c) */
extern bool sf_raise_mark(int64 mark_id);

/* What the mark writer (mark_writer.c) carries from one round to the next. */
typedef struct MarkWriterMemory
{
	int64		seen;			/* the issue count seen last, -1 at first */
	TimestampTz active_since;	/* when that count last changed, 0 if never */
	int64		slow_write_ms;	/* its recent slowest write, fading */
} MarkWriterMemory;

extern long sf_mark_writer_round(MarkWriterMemory *memory);
extern void sf_set_ahead_latch(Latch *latch);

/* Worker-id leases (lease.c): what the lease keeper reports. */
typedef enum SnowflakeLeaseState
{
	SNOWFLAKE_LEASE_NONE,		/* no registry: the configured worker id */
	SNOWFLAKE_LEASE_CLAIMING,	/* asking the registry for a worker id */
	SNOWFLAKE_LEASE_HELD,		/* holding a lease, renewed on time */
	SNOWFLAKE_LEASE_UNREACHABLE,	/* the registry does not answer */
	SNOWFLAKE_LEASE_LOST,		/* another server took the worker id */
	SNOWFLAKE_LEASE_REFUSED		/* the registry refused a claim */
} SnowflakeLeaseState;

#define SNOWFLAKE_LEASE_ERROR_SIZE 512

typedef struct SnowflakeLeaseStatus
{
	SnowflakeLeaseState state;
	TimestampTz expires;		/* when the lease lapses (the registry's
								 * clock), 0 if none */
	int64		renewals;		/* renewals that succeeded */
	int64		failures;		/* attempts to reach the registry that failed */
	char		error[SNOWFLAKE_LEASE_ERROR_SIZE];	/* the last problem, or "" */
	bool		has_token;		/* the keeper drew this server's token */
	char		token[40];		/* the holder's secret token, as text: never
								 * shown */
} SnowflakeLeaseStatus;

extern void sf_generator_use_leases(void);
extern void sf_set_lease_latch(Latch *latch);
extern void sf_install_lease(int64 worker, int64 fence);
extern void sf_raise_ceiling(int64 ceiling);
extern int64 sf_freeze_lease(void);
extern void sf_lease_position(int64 *last_id, int64 *ceiling, int64 *wanted);
extern void sf_report_lease(const SnowflakeLeaseStatus *lease);
extern void sf_get_lease(SnowflakeLeaseStatus *lease, int64 *worker,
						 int64 *ceiling);
extern const char *sf_lease_error_shown(const SnowflakeLeaseStatus *lease);

#endif							/* SNOWFLAKE_GENERATOR_H */
