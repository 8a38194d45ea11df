/*-------------------------------------------------------------------------
 *
 * snowflake.c
 *	  The module's entry point: wires the parts together.
 *
 * snowflake must be in shared_preload_libraries: the generator lives in
 * shared memory and all its settings are fixed when the server starts.
 * Loaded any other way, _PG_init defines nothing and every SQL function
 * that needs the generator or the layout refuses with a hint that names
 * shared_preload_libraries (sf_require_preload, layout.c).
 *
 * Each part defines its own settings, hooks and workers in its init
 * function; src/snowflake.h maps the parts.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "compat.h"
#include "snowflake.h"

SNOWFLAKE_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	/*
	 * Without shared_preload_libraries there is no shared memory to use, and
	 * PGC_POSTMASTER settings cannot be defined any more.
	 */
	if (!process_shared_preload_libraries_in_progress)
		return;

	sf_layout_init();			/* the layout's settings; reads the epoch */
	sf_generator_init();		/* the clock's settings; shared memory */
	sf_mark_init();				/* the WAL resource manager of the mark */
	sf_mark_writer_init();		/* the background mark writer */
	sf_nextval_init();			/* DISCARD forgets snowflake_currval() */
	sf_lease_init();			/* worker ids leased from a registry */

	MarkGUCPrefixReserved("snowflake");
}
