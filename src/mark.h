/*-------------------------------------------------------------------------
 *
 * mark.h
 *	  The persisted high-water mark (mark.c): a file and WAL records.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_MARK_H
#define SNOWFLAKE_MARK_H

#include "utils/uuid.h"

/* The mark file and the lease file, relative to the data directory. */
#define SNOWFLAKE_MARK_FILE "snowflake.mark"
#define SNOWFLAKE_LEASE_FILE "snowflake.lease"

extern bool sf_read_mark_file(int64 *mark_id);
extern void sf_persist_mark(int64 mark_id);
extern bool sf_read_lease_file(int32 *worker_id, pg_uuid_t *token);
extern void sf_persist_lease(int32 worker_id, const pg_uuid_t *token);

#endif							/* SNOWFLAKE_MARK_H */
