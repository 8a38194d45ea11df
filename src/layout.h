/*-------------------------------------------------------------------------
 *
 * layout.h
 *	  The layout of an ID and the settings that make it (layout.c), and the
 *	  reading of the epoch (epoch.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_LAYOUT_H
#define SNOWFLAKE_LAYOUT_H

#include "datatype/timestamp.h"

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

/*
 * The layout of an ID, derived once per backend from the settings (which
 * can only change at server restart), and the worker id configured with it.
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
	int			worker_id;		/* snowflake.worker_id, or
								 * SNOWFLAKE_WORKER_ID_UNSET */
} SnowflakeLayout;

/* layout.c: an error unless the library was preloaded */
extern void sf_require_preload(void);

/* layout.c: the layout in force */
extern const SnowflakeLayout *sf_layout(void);
extern int	sf_configured_worker_id(void);
extern void sf_require_worker_id(const SnowflakeLayout *layout);

/* layout.c: the clock, and IDs to parts and back */
extern int64 sf_clock_ms(const SnowflakeLayout *layout);
extern int64 sf_compose(const SnowflakeLayout *layout, int64 timestamp,
						int64 worker, int64 sequence);
extern void sf_decompose(const SnowflakeLayout *layout, int64 id,
						 int64 *timestamp, int64 *worker,
						 int64 *sequence);
extern const SnowflakeLayout *sf_decode_id(int64 id, int64 *timestamp,
										   int64 *worker, int64 *sequence);
extern int64 sf_check_id(int64 id);

/* layout.c: instants to timestamp fields and back */
extern bool sf_timestamp_fits(const SnowflakeLayout *layout,
							  int64 timestamp);
extern TimestampTz sf_timestamp_to_timestamptz(const SnowflakeLayout *layout,
											   int64 timestamp);
extern int64 sf_ms_since_epoch(const SnowflakeLayout *layout,
							   TimestampTz ts, bool *exact);
extern TimestampTz sf_lifetime_end(const SnowflakeLayout *layout);
extern int64 sf_timestamptz_to_timestamp(const SnowflakeLayout *layout,
										 TimestampTz ts);

/* epoch.c */
extern bool sf_parse_epoch(const char *str, TimestampTz *result,
						   const char **problem);

#endif							/* SNOWFLAKE_LAYOUT_H */
