/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  The one place that hides differences between PostgreSQL versions.
 *
 * Built with -Werror and tested by scripts/test.sh on every major of
 * PG_MAJORS in scripts/lib.sh, each with its Debian suite's own compiler.
 * 16 is packaged by no Debian suite the tests can reach: its notes below
 * come from reading its headers.  Treat this file as the first place to look
 * when a build on another version fails.
 *
 * Why not 13 or 14
 * ----------------
 * The failover guarantee rests on RegisterCustomRmgr (15+): the persisted
 * mark travels in WAL records of our own resource manager, and a standby
 * replays them into its own mark.  Before 15 an extension cannot add WAL
 * records that a standby hands back to it (a logical message is WAL-logged
 * but its redo calls no extension code), so a promoted standby could reissue
 * IDs its old primary had handed out.  shmem_request_hook (15+) and
 * MarkGUCPrefixReserved (15+) would be easy to shim; the resource manager
 * is not, and we would rather refuse to build than silently weaken the
 * guarantee.
 *
 * What the sources use, version by version
 * ----------------------------------------
 *	XLogRegisterData	takes "char *" in 15 and 16 and "const void *" in
 *						18; mark.c passes a "char *", which converts to
 *						either.
 *	RegisterCustomRmgr	takes "RmgrData *" in 15 and "const RmgrData *" in
 *						later sources; mark.c passes a non-const pointer,
 *						which converts to either.
 *	PG_MODULE_MAGIC_EXT	new in 18 (name and version shown by
 *						pg_get_loaded_modules()); PG_MODULE_MAGIC still
 *						works there.  SNOWFLAKE_MODULE_MAGIC below picks the
 *						richer one where it exists.
 *	PG_WAIT_EXTENSION	still defined in 17 and 18 (utils/wait_classes.h in
 *						18, included through pgstat.h).
 *	ProcessUtility_hook	the signature with readOnlyTree (added in 14) and
 *						QueryCompletion is the same in 15 to 19 (read in
 *						the 17, 18 and 19rc1 headers), as are DiscardStmt
 *						and DiscardMode: no shim.
 *	VARDATA_ANY			varatt.h from 16 on, included below (19 stopped
 *						bringing it in through other headers).
 *	ereturn,			soft input errors, new in 16: an input function
 *	SOFT_ERROR_OCCURRED	reports bad input into fcinfo->context, so that
 *						pg_input_is_valid() and COPY ... ON_ERROR (17) go
 *						on.  Shimmed below for 15, where input functions
 *						throw.
 *	int8in, int8out,	the V1 functions type.c hands its fcinfo to: the
 *	int8send			same in 15 to 19 (int8in honours fcinfo->context
 *						from 16 on).
 *	shmem_request_hook, MarkGUCPrefixReserved, lnext(list, cell),
 *	tm2timestamp, timestamp2tm, pg_tzset, ParseConfigFile,
 *	ConditionVariableSleep, PG_ENSURE_ERROR_CLEANUP, WaitLatch, the RmgrData
 *	fields we fill in: unchanged from 15 to the newest major tested.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_COMPAT_H
#define SNOWFLAKE_COMPAT_H

#include "fmgr.h"

/*
 * VARDATA_ANY and the other varlena macros: in postgres.h up to 15, in
 * varatt.h from 16 on, which other server headers brought in up to 18 but
 * no longer do in 19.
 */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/*
 * Soft input errors: ereturn() and SOFT_ERROR_OCCURRED() from 16 on.  In 15
 * no caller asks for soft errors, so ereturn() throws, and nothing a called
 * input function did was soft.
 */
#if PG_VERSION_NUM >= 160000
#include "nodes/miscnodes.h"
#else
#define SOFT_ERROR_OCCURRED(escontext) false
#define ereturn(context, dummy_value, ...) \
	do { \
		ereport(ERROR, __VA_ARGS__); \
		return dummy_value; \
	} while (0)
#endif

#if PG_VERSION_NUM < 150000
#error "snowflake needs PostgreSQL 15 or later (custom WAL resource managers carry its failover guarantee)"
#endif

/*
 * The module's magic block, written "SNOWFLAKE_MODULE_MAGIC;" in place of
 * "PG_MODULE_MAGIC;".  The Makefile passes SNOWFLAKE_VERSION, read from
 * the control file.
 */
#ifndef SNOWFLAKE_VERSION
#define SNOWFLAKE_VERSION "unknown"
#endif
#ifdef PG_MODULE_MAGIC_EXT
#define SNOWFLAKE_MODULE_MAGIC \
	PG_MODULE_MAGIC_EXT(.name = "snowflake", .version = SNOWFLAKE_VERSION)
#else
#define SNOWFLAKE_MODULE_MAGIC PG_MODULE_MAGIC
#endif

#endif							/* SNOWFLAKE_COMPAT_H */
