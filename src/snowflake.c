/*-------------------------------------------------------------------------
 *
 * snowflake.c
 *	  Module setup: settings, shared memory and hooks.
 *
 * snowflake must be in shared_preload_libraries: the generator lives in
 * shared memory and all its settings are fixed when the server starts.
 * Loaded any other way, _PG_init defines nothing and every SQL function
 * refuses with a hint that names shared_preload_libraries.
 *
 * It also registers the WAL resource manager that carries the persisted mark
 * (mark.c), which is why every server replaying our WAL must preload it.
 *
 * Settings in postgresql.conf that PostgreSQL rejects are replaced by their
 * boot values with only a warning in the log.  The boot values are chosen so
 * that this is safe: snowflake.worker_id boots "unset", which refuses to
 * generate.  For snowflake.epoch the default would silently shift every ID,
 * so the check hooks accept any value while the server starts and the
 * problem is reported each time an ID is requested (see layout.c); later,
 * ALTER SYSTEM is refused values that cannot work (see the check hooks).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "snowflake.h"

SNOWFLAKE_MODULE_MAGIC;

/* Settings */
int			snowflake_worker_id = SNOWFLAKE_WORKER_ID_UNSET;
char	   *snowflake_epoch = NULL;
int			snowflake_worker_bits = 10;
int			snowflake_sequence_bits = 12;
int			snowflake_max_drift = 60000;
int			snowflake_max_wait = 1000;

bool		snowflake_preloaded = false;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

void		_PG_init(void);

/*
 * Check hooks.
 *
 * While postgresql.conf is applied at server start they accept whatever the
 * ranges allow: a rejected value would be replaced by its boot value with
 * only a warning in the log, and for the epoch that default would silently
 * shift every ID.  The layout is validated as a whole when IDs are first
 * asked for (layout.c), and generation refuses with an error naming the
 * settings.
 *
 * Afterwards (ALTER SYSTEM, or a reload of an edited postgresql.conf) each
 * value is also checked against the other settings in force, so that a
 * combination that cannot work is refused before it reaches the file.
 * Changing two settings that depend on each other may therefore need a
 * particular order, which the detail message names.
 */

/* The timestamp width these worker and sequence widths leave. */
static int
timestamp_bits(int worker_bits, int sequence_bits)
{
	return 63 - worker_bits - sequence_bits;
}

static bool
check_layout_bits(int worker_bits, int sequence_bits)
{
	if (timestamp_bits(worker_bits, sequence_bits) < SNOWFLAKE_MIN_TIMESTAMP_BITS)
	{
		GUC_check_errdetail("snowflake.worker_bits = %d and snowflake.sequence_bits = %d leave %d of the 63 bits for the timestamp; at least %d are needed.",
							worker_bits, sequence_bits,
							timestamp_bits(worker_bits, sequence_bits),
							SNOWFLAKE_MIN_TIMESTAMP_BITS);
		return false;
	}
	return true;
}

static bool
check_worker_fits(int worker_id, int worker_bits)
{
	if (worker_id != SNOWFLAKE_WORKER_ID_UNSET && worker_id >= (1 << worker_bits))
	{
		GUC_check_errdetail("Worker id %d does not fit in %d worker bits, which hold 0 to %d; change snowflake.worker_id and snowflake.worker_bits so that it fits.",
							worker_id, worker_bits, (1 << worker_bits) - 1);
		return false;
	}
	return true;
}

static bool
check_worker_id(int *newval, void **extra, GucSource source)
{
	if (process_shared_preload_libraries_in_progress)
		return true;
	return check_worker_fits(*newval, snowflake_worker_bits);
}

static bool
check_worker_bits(int *newval, void **extra, GucSource source)
{
	if (process_shared_preload_libraries_in_progress)
		return true;
	return check_layout_bits(*newval, snowflake_sequence_bits) &&
		check_worker_fits(snowflake_worker_id, *newval);
}

static bool
check_sequence_bits(int *newval, void **extra, GucSource source)
{
	if (process_shared_preload_libraries_in_progress)
		return true;
	return check_layout_bits(snowflake_worker_bits, *newval);
}

static bool
check_epoch(char **newval, void **extra, GucSource source)
{
	TimestampTz epoch;
	TimestampTz now = GetCurrentTimestamp();
	const char *problem;
	int			bits = timestamp_bits(snowflake_worker_bits,
									  snowflake_sequence_bits);

	if (process_shared_preload_libraries_in_progress)
		return true;

	if (!snowflake_parse_epoch(*newval, &epoch, &problem))
	{
		GUC_check_errdetail("%s", problem);
		return false;
	}
	if (epoch > now)
	{
		GUC_check_errdetail("The epoch must not be in the future.");
		return false;
	}
	/* the current layout's lifetime, counted from this epoch, must not be over */
	if (bits >= SNOWFLAKE_MIN_TIMESTAMP_BITS &&
		(now - epoch) / 1000 > (INT64CONST(1) << bits) - 1)
	{
		GUC_check_errdetail("With %d timestamp bits, IDs last %.1f years from the epoch, and this epoch is older than that; choose a later epoch.",
							bits,
							(double) (INT64CONST(1) << bits) / (1000.0 * 3600 * 24 * 365.25));
		return false;
	}
	return true;
}

static const char *
show_worker_id(void)
{
	static char buf[16];

	if (snowflake_worker_id == SNOWFLAKE_WORKER_ID_UNSET)
		return "unset";
	snprintf(buf, sizeof(buf), "%d", snowflake_worker_id);
	return buf;
}

static void
snowflake_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(snowflake_shmem_size());
	RequestNamedLWLockTranche("snowflake", 1);
}

static void
snowflake_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	snowflake_shmem_init();
	LWLockRelease(AddinShmemInitLock);
}

static void
define_settings(void)
{
	DefineCustomIntVariable("snowflake.worker_id",
							"Worker id written into every ID this server generates.",
							"Each server must have its own; -1 means unset, and an unset worker id refuses to generate.",
							&snowflake_worker_id,
							SNOWFLAKE_WORKER_ID_UNSET,
							SNOWFLAKE_WORKER_ID_UNSET, SNOWFLAKE_MAX_WORKER_ID,
							PGC_POSTMASTER,
							0,
							check_worker_id, NULL, show_worker_id);

	DefineCustomStringVariable("snowflake.epoch",
							   "The instant that timestamp 0 of an ID stands for.",
							   "A timestamp with time zone in the past, in whole milliseconds.",
							   &snowflake_epoch,
							   "2025-01-01 00:00:00+00",
							   PGC_POSTMASTER,
							   0,
							   check_epoch, NULL, NULL);

	DefineCustomIntVariable("snowflake.worker_bits",
							"Number of bits of an ID that hold the worker id.",
							"The timestamp gets 63 - worker_bits - sequence_bits bits, which must be at least 35.",
							&snowflake_worker_bits,
							10,
							SNOWFLAKE_MIN_WORKER_BITS, SNOWFLAKE_MAX_WORKER_BITS,
							PGC_POSTMASTER,
							0,
							check_worker_bits, NULL, NULL);

	DefineCustomIntVariable("snowflake.sequence_bits",
							"Number of bits of an ID that count IDs within one millisecond.",
							"The timestamp gets 63 - worker_bits - sequence_bits bits, which must be at least 35.",
							&snowflake_sequence_bits,
							12,
							SNOWFLAKE_MIN_SEQUENCE_BITS, SNOWFLAKE_MAX_SEQUENCE_BITS,
							PGC_POSTMASTER,
							0,
							check_sequence_bits, NULL, NULL);

	DefineCustomIntVariable("snowflake.max_drift",
							"How far ahead of the wall clock an ID's timestamp may run.",
							"IDs run ahead when the clock steps back or a millisecond's sequence numbers are used up; 0 never runs ahead.",
							&snowflake_max_drift,
							60000,
							0, INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("snowflake.max_wait",
							"How long a call may wait for the clock to catch up before it fails.",
							"A call waits only when the next ID would run more than snowflake.max_drift ahead of the clock.",
							&snowflake_max_wait,
							1000,
							0, INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("snowflake");
}

void
_PG_init(void)
{
	/*
	 * Without shared_preload_libraries there is no shared memory to use, and
	 * PGC_POSTMASTER settings cannot be defined any more.
	 */
	if (!process_shared_preload_libraries_in_progress)
		return;

	define_settings();
	snowflake_load_epoch();
	snowflake_register_rmgr();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = snowflake_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = snowflake_shmem_startup;

	snowflake_preloaded = true;
}
