/*-------------------------------------------------------------------------
 *
 * mark.h
 *	  The persisted high-water mark (mark.c): a file and WAL records.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_MARK_H
#define SNOWFLAKE_MARK_H

/* The mark file, relative to the data directory. */
#define SNOWFLAKE_MARK_FILE "snowflake.mark"

extern bool sf_read_mark_file(int64 *mark_id);
extern void sf_persist_mark(int64 mark_id);

#endif							/* SNOWFLAKE_MARK_H */
