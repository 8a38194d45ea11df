/*-------------------------------------------------------------------------
 *
 * snowflake.h
 *	  Declarations shared by the source files of the snowflake extension.
 *
 * An ID is a non-negative bigint laid out, from the high bits down, as
 *
 *		0 | timestamp | worker id | sequence
 *
 * where the timestamp counts milliseconds since snowflake.epoch and the
 * field widths come from snowflake.worker_bits and snowflake.sequence_bits
 * (the timestamp takes what is left of snowflake.id_bits, 63 by default;
 * 53 keeps every ID exact as a JavaScript number).
 *
 * The files and their jobs:
 *	snowflake.c		module setup: GUCs, shared memory, hooks
 *	layout.c		the bit layout and the epoch: validation, encoding
 *	base32.c		the text form of an ID
 *	generator.c		the shared generator state and the locked step
 *	mark.c			the persisted high-water mark: a file and WAL
 *	worker.c		the background worker that writes marks ahead of need
 *	functions.c		the SQL-callable functions
 *	timefuncs.c		the SQL-callable time helpers, the text form and the
 *					time-range operator with its planner support
 *
 * Names: C functions callable from SQL carry their SQL name (snowflake_*);
 * internal functions shared between files start with sf_, and static ones
 * have no prefix.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_H
#define SNOWFLAKE_H

#include "datatype/timestamp.h"
#include "storage/latch.h"

/* The value of snowflake.worker_id while it is not set. */
#define SNOWFLAKE_WORKER_ID_UNSET	(-1)

/* Allowed field widths; see layout.c for the reasons. */
#define SNOWFLAKE_MIN_WORKER_BITS	0
#define SNOWFLAKE_MAX_WORKER_BITS	20
#define SNOWFLAKE_MIN_SEQUENCE_BITS 1
#define SNOWFLAKE_MAX_SEQUENCE_BITS 22
#define SNOWFLAKE_MIN_TIMESTAMP_BITS 35
#define SNOWFLAKE_MAX_ID_BITS		63
#define SNOWFLAKE_MIN_ID_BITS \
	(SNOWFLAKE_MIN_TIMESTAMP_BITS + SNOWFLAKE_MIN_SEQUENCE_BITS)
#define SNOWFLAKE_MAX_WORKER_ID		((1 << SNOWFLAKE_MAX_WORKER_BITS) - 1)

/* GUC variables, defined in snowflake.c */
extern int	snowflake_worker_id;
extern char *snowflake_epoch;
extern int	snowflake_worker_bits;
extern int	snowflake_sequence_bits;
extern int	snowflake_id_bits;
extern int	snowflake_max_drift;
extern int	snowflake_max_wait;

/* True once _PG_init ran from shared_preload_libraries (snowflake.c). */
extern bool snowflake_preloaded;
extern void sf_require_preload(void);

/*
 * The layout of an ID, derived once per backend from the GUCs (which can
 * only change at server restart).
 */
typedef struct SnowflakeLayout
{
	int			id_bits;		/* every ID is below 2^id_bits */
	int			timestamp_bits;
	int			worker_bits;
	int			sequence_bits;
	TimestampTz epoch;			/* the instant timestamp 0 stands for */
	int64		max_timestamp;	/* 2^timestamp_bits - 1 */
	int64		max_worker;		/* 2^worker_bits - 1 */
	int64		max_sequence;	/* 2^sequence_bits - 1 */
	int64		max_id;			/* 2^id_bits - 1 */
} SnowflakeLayout;

/* layout.c */
extern bool sf_parse_epoch(const char *str, TimestampTz *result,
						   const char **problem);
extern void sf_load_epoch(void);
extern const SnowflakeLayout *sf_layout(void);
extern int64 sf_clock_ms(const SnowflakeLayout *layout);
extern int64 sf_check_id(int64 id);
extern void sf_check_id_fits(const SnowflakeLayout *layout, int64 id);
extern int64 sf_compose(const SnowflakeLayout *layout, int64 timestamp,
						int64 worker, int64 sequence);
extern void sf_decompose(const SnowflakeLayout *layout, int64 id,
						 int64 *timestamp, int64 *worker,
						 int64 *sequence);
extern bool sf_timestamp_fits(const SnowflakeLayout *layout,
							  int64 timestamp);
extern TimestampTz sf_timestamp_to_timestamptz(const SnowflakeLayout *layout,
											   int64 timestamp);
extern int64 sf_ms_since_epoch(const SnowflakeLayout *layout,
							   TimestampTz ts, bool *exact);
extern TimestampTz sf_lifetime_end(const SnowflakeLayout *layout);
extern int64 sf_timestamptz_to_timestamp(const SnowflakeLayout *layout,
										 TimestampTz ts);

/* The text form of an ID: fixed-width Crockford base32 (base32.c). */
#define SNOWFLAKE_BASE32_LENGTH 13

typedef enum SnowflakeBase32Status
{
	SNOWFLAKE_BASE32_OK,
	SNOWFLAKE_BASE32_BAD_DIGIT, /* a character that is not a digit */
	SNOWFLAKE_BASE32_BAD_LENGTH,	/* not SNOWFLAKE_BASE32_LENGTH digits */
	SNOWFLAKE_BASE32_OUT_OF_RANGE	/* above 2^63 - 1 */
} SnowflakeBase32Status;

extern void sf_base32_encode(int64 id, char *buf);
extern SnowflakeBase32Status sf_base32_decode(const char *str, int len,
											  int64 *result,
											  int *bad_offset);

/* The mark file, relative to the data directory. */
#define SNOWFLAKE_MARK_FILE "snowflake.mark"

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

/* generator.c */
extern Size sf_shmem_size(void);
extern void sf_shmem_init(void);
extern bool sf_raise_mark(int64 mark_id);
extern int64 sf_reserve(int64 n, SnowflakeBlock *block);
extern int64 sf_block_id(const SnowflakeLayout *layout,
						 const SnowflakeBlock *block, int64 i);
extern int64 sf_next_id(void);
extern void sf_get_stats(SnowflakeStats *stats, int64 *last_id,
						 int64 *mark_id, int64 *drift_ms);
extern void sf_reset_stats(void);
extern void sf_set_ahead_latch(Latch *latch);

/* What the mark writer carries from one round to the next. */
typedef struct MarkWriterMemory
{
	int64		seen;			/* the issue count seen last, -1 at first */
	TimestampTz active_since;	/* when that count last changed, 0 if never */
	int64		slow_write_ms;	/* its recent slowest write, fading */
} MarkWriterMemory;

extern long sf_mark_writer_round(MarkWriterMemory *memory);

/* worker.c */
extern void sf_register_mark_writer(void);
extern PGDLLEXPORT void sf_mark_writer_main(Datum main_arg);

/* functions.c */
extern void sf_forget_currval(void);

/* mark.c */
extern void sf_register_rmgr(void);
extern bool sf_read_mark_file(int64 *mark_id);
extern void sf_persist_mark(int64 mark_id);

#endif							/* SNOWFLAKE_H */
