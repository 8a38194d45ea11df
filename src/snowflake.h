/*-------------------------------------------------------------------------
 *
 * snowflake.h
 *	  What every part of the snowflake extension shares, and a map of the
 *	  parts.
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
 * The parts, and what each holds
 * ------------------------------
 *	snowflake.c		_PG_init: calls each part's init, nothing more
 *	layout.c		the layout settings (worker id, widths, epoch), their
 *					checks, the arithmetic of IDs, and the refusal when
 *					the library was not preloaded
 *	epoch.c			reading snowflake.epoch (ISO 8601 only)
 *	generator.c		the server's one generator in shared memory, and the
 *					settings it obeys (max_drift, max_borrow, max_wait,
 *					sequence_start)
 *	mark.c			the persisted high-water mark: a file and WAL records
 *	mark_writer.c	the background worker that writes the mark ahead of need
 *	lease.c			the background worker that leases the worker id from a
 *					registry database (settings registry, lease_time)
 *	nextval.c		SQL: snowflake_nextval, snowflake_nextval(n),
 *					snowflake_currval, and DISCARD forgetting currval
 *	stats.c			SQL: snowflake_stats, snowflake_stats_reset
 *	parts.c			SQL: an ID's parts and time (snowflake_parse,
 *					snowflake_to_timestamptz, snowflake_min_id and _max_id,
 *					snowflake_compose)
 *	time_range.c	SQL: the operator id <@ tstzrange and its planner support
 *	base32.c		SQL: the text form (snowflake_encode, snowflake_decode)
 *	type.c			SQL: the column type snowflake (a bigint that JSON
 *					writes as a string): its input and output, and the
 *					casts to it that refuse negative numbers
 *
 * Each part that has settings defines them in its own init function and
 * keeps their variables static; other parts ask it.  The headers follow the
 * parts: layout.h, generator.h and mark.h.  Who includes whom forms a tree,
 * with the leaves at the bottom:
 *
 *	snowflake.c -> nextval.c, generator.c, mark.c, mark_writer.c, lease.c,
 *				   layout.c
 *	lease.c -> generator.c, mark.c (the lease file and its WAL record)
 *	nextval.c, stats.c, mark_writer.c -> generator.c
 *	generator.c <-> mark.c	(the one cycle: writing a mark is the
 *							generator's step, and WAL redo raises the
 *							generator's state)
 *	everything that reads IDs -> layout.c -> epoch.c
 *
 * Names: C functions callable from SQL carry their SQL name (snowflake_*);
 * functions shared between files start with sf_, and static ones have no
 * prefix.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_H
#define SNOWFLAKE_H

/* Each part's setup, called once by _PG_init while preloading. */
extern void sf_layout_init(void);
extern void sf_generator_init(void);
extern void sf_mark_init(void);
extern void sf_mark_writer_init(void);
extern void sf_nextval_init(void);
extern void sf_lease_init(void);

#endif							/* SNOWFLAKE_H */
