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
 * (mark.c), which is why every server replaying our WAL must preload it,
 * and the background worker that writes that mark ahead of need (worker.c).
 *
 * A utility hook makes DISCARD SEQUENCES and DISCARD ALL forget the
 * session's snowflake_currval(), as they forget core currval(): PostgreSQL
 * has no DISCARD callback for extensions.
 *
 * Settings in postgresql.conf that PostgreSQL rejects are replaced by their
 * boot values with only a warning in the log.  The boot values are chosen so
 * that this is safe: snowflake.worker_id boots "unset", which refuses to
 * generate.  For snowflake.epoch the default would silently shift every ID,
 * so the check hooks accept any value while the server starts and the
 * problem is reported each time an ID is requested (see layout.c); later,
 * ALTER SYSTEM is refused values that would leave the next server start
 * with a layout that cannot work (see the check hooks).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "tcop/utility.h"
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
int			snowflake_id_bits = SNOWFLAKE_MAX_ID_BITS;
int			snowflake_max_drift = 60000;
int			snowflake_max_wait = 1000;

bool		snowflake_preloaded = false;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static ProcessUtility_hook_type prev_ProcessUtility_hook = NULL;

void		_PG_init(void);

/*
 * Refuse politely when the library was not preloaded: without it there are
 * no settings and no shared generator.
 */
void
sf_require_preload(void)
{
	if (!snowflake_preloaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake must be loaded via shared_preload_libraries"),
				 errdetail("The generator and its settings live in shared memory, which is set up only when the server starts."),
				 errhint("Add snowflake to shared_preload_libraries in postgresql.conf and restart the server.")));
}

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
 * Afterwards (ALTER SYSTEM, a reload, the pg_file_settings view) a value of
 * worker_id, id_bits, worker_bits, sequence_bits or epoch is checked as part
 * of the layout the next server start would read: the value itself, and for
 * each of the other four its last value in the configuration files
 * (postgresql.conf with its includes, then postgresql.auto.conf, which
 * holds what earlier ALTER SYSTEM commands wrote but a restart has not yet
 * put in force), or its running value where no file sets it or the file's
 * value is not valid.  Checking against the running values alone would
 * accept two changes that are each fine but not together.  The layout must
 * leave SNOWFLAKE_MIN_TIMESTAMP_BITS timestamp bits, hold the worker id in
 * its worker bits, and, when its epoch parses, not be past its lifetime;
 * the epoch itself must parse and not lie in the future.  Changing two
 * settings that depend on each other may therefore need a particular
 * order, which the hint names.  ALTER SYSTEM RESET calls no check hook.
 */

/* The settings that make up the layout, as one server start would read them. */
typedef struct LayoutSettings
{
	int			worker_id;
	int			id_bits;
	int			worker_bits;
	int			sequence_bits;
	char	   *epoch;
} LayoutSettings;

/* The timestamp width these ID, worker and sequence widths leave. */
static int
timestamp_bits(int id_bits, int worker_bits, int sequence_bits)
{
	return id_bits - worker_bits - sequence_bits;
}

/* Take "value" for *setting if it is an integer within [min, max]. */
static void
take_int_setting(const char *value, int min, int max, int *setting)
{
	int			result;

	if (parse_int(value, &result, 0, NULL) && result >= min && result <= max)
		*setting = result;
}

/*
 * The layout settings the next server start would read (see above).  The
 * files are parsed quietly: if they cannot be, the running values are used.
 */
static void
read_pending_layout(LayoutSettings *layout)
{
	ConfigVariable *head = NULL;
	ConfigVariable *tail = NULL;
	ConfigVariable *item;

	layout->worker_id = snowflake_worker_id;
	layout->id_bits = snowflake_id_bits;
	layout->worker_bits = snowflake_worker_bits;
	layout->sequence_bits = snowflake_sequence_bits;
	layout->epoch = pstrdup(snowflake_epoch);

	if (ConfigFileName == NULL ||
		!ParseConfigFile(ConfigFileName, false, NULL, 0, 0, DEBUG3,
						 &head, &tail) ||
		!ParseConfigFile(PG_AUTOCONF_FILENAME, false, NULL, 0, 0, DEBUG3,
						 &head, &tail))
	{
		FreeConfigVariables(head);
		return;
	}

	for (item = head; item != NULL; item = item->next)
	{
		if (pg_strcasecmp(item->name, "snowflake.worker_id") == 0)
			take_int_setting(item->value, SNOWFLAKE_WORKER_ID_UNSET,
							 SNOWFLAKE_MAX_WORKER_ID, &layout->worker_id);
		else if (pg_strcasecmp(item->name, "snowflake.id_bits") == 0)
			take_int_setting(item->value, SNOWFLAKE_MIN_ID_BITS,
							 SNOWFLAKE_MAX_ID_BITS, &layout->id_bits);
		else if (pg_strcasecmp(item->name, "snowflake.worker_bits") == 0)
			take_int_setting(item->value, SNOWFLAKE_MIN_WORKER_BITS,
							 SNOWFLAKE_MAX_WORKER_BITS, &layout->worker_bits);
		else if (pg_strcasecmp(item->name, "snowflake.sequence_bits") == 0)
			take_int_setting(item->value, SNOWFLAKE_MIN_SEQUENCE_BITS,
							 SNOWFLAKE_MAX_SEQUENCE_BITS, &layout->sequence_bits);
		else if (pg_strcasecmp(item->name, "snowflake.epoch") == 0)
			layout->epoch = pstrdup(item->value);
	}
	FreeConfigVariables(head);
}

#define LAYOUT_HINT \
	"The other snowflake settings are taken as the next server start would read them, including values set by ALTER SYSTEM that are not yet in force; change them in an order where each step leaves a working layout."

/*
 * Whether the layout can work; if not, says why in the GUC check's detail
 * and hint.
 */
static bool
check_layout(const LayoutSettings *layout)
{
	int			bits = timestamp_bits(layout->id_bits, layout->worker_bits,
									  layout->sequence_bits);
	TimestampTz epoch;
	const char *problem;

	if (bits < SNOWFLAKE_MIN_TIMESTAMP_BITS)
	{
		GUC_check_errhint("%s", LAYOUT_HINT);
		GUC_check_errdetail("snowflake.worker_bits = %d and snowflake.sequence_bits = %d would leave %d of the %d bits of snowflake.id_bits for the timestamp; at least %d are needed.",
							layout->worker_bits, layout->sequence_bits, bits,
							layout->id_bits, SNOWFLAKE_MIN_TIMESTAMP_BITS);
		return false;
	}
	if (layout->worker_id != SNOWFLAKE_WORKER_ID_UNSET &&
		layout->worker_id >= (1 << layout->worker_bits))
	{
		GUC_check_errhint("%s", LAYOUT_HINT);
		GUC_check_errdetail("Worker id %d would not fit in %d worker bits, which hold 0 to %d.",
							layout->worker_id, layout->worker_bits,
							(1 << layout->worker_bits) - 1);
		return false;
	}
	/* an epoch that does not parse is reported when it is set or used */
	if (sf_parse_epoch(layout->epoch, &epoch, &problem) &&
		(GetCurrentTimestamp() - epoch) / 1000 > (INT64CONST(1) << bits) - 1)
	{
		GUC_check_errhint("%s", LAYOUT_HINT);
		GUC_check_errdetail("With %d timestamp bits (snowflake.id_bits = %d, snowflake.worker_bits = %d, snowflake.sequence_bits = %d), IDs last %.2f years from the epoch, %s, and that time is over.",
							bits, layout->id_bits, layout->worker_bits,
							layout->sequence_bits,
							(double) (INT64CONST(1) << bits) / (1000.0 * 3600 * 24 * 365.25),
							layout->epoch);
		return false;
	}
	return true;
}

static bool
check_worker_id(int *newval, void **extra, GucSource source)
{
	LayoutSettings layout;

	if (process_shared_preload_libraries_in_progress)
		return true;
	read_pending_layout(&layout);
	layout.worker_id = *newval;
	return check_layout(&layout);
}

static bool
check_worker_bits(int *newval, void **extra, GucSource source)
{
	LayoutSettings layout;

	if (process_shared_preload_libraries_in_progress)
		return true;
	read_pending_layout(&layout);
	layout.worker_bits = *newval;
	return check_layout(&layout);
}

static bool
check_sequence_bits(int *newval, void **extra, GucSource source)
{
	LayoutSettings layout;

	if (process_shared_preload_libraries_in_progress)
		return true;
	read_pending_layout(&layout);
	layout.sequence_bits = *newval;
	return check_layout(&layout);
}

static bool
check_id_bits(int *newval, void **extra, GucSource source)
{
	LayoutSettings layout;

	if (process_shared_preload_libraries_in_progress)
		return true;
	read_pending_layout(&layout);
	layout.id_bits = *newval;
	return check_layout(&layout);
}

static bool
check_epoch(char **newval, void **extra, GucSource source)
{
	LayoutSettings layout;
	TimestampTz epoch;
	const char *problem;

	if (process_shared_preload_libraries_in_progress)
		return true;

	if (!sf_parse_epoch(*newval, &epoch, &problem))
	{
		GUC_check_errdetail("%s", problem);
		return false;
	}
	if (epoch > GetCurrentTimestamp())
	{
		GUC_check_errdetail("The epoch must not be in the future.");
		return false;
	}
	read_pending_layout(&layout);
	layout.epoch = *newval;
	return check_layout(&layout);
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
sf_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(sf_shmem_size());
	RequestNamedLWLockTranche("snowflake", 1);
}

static void
sf_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	sf_shmem_init();
	LWLockRelease(AddinShmemInitLock);
}

/*
 * DISCARD SEQUENCES and DISCARD ALL forget what snowflake_currval() returns,
 * as core's DiscardCommand forgets currval()'s sequences.  The session's
 * value is forgotten only once the statement has run: DISCARD ALL refuses
 * inside a transaction block, and then core forgets nothing either.  Like
 * core's, forgetting is not undone if the transaction rolls back.
 */
static void
sf_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
				  bool readOnlyTree, ProcessUtilityContext context,
				  ParamListInfo params, QueryEnvironment *queryEnv,
				  DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	bool		forgets_currval = false;

	if (IsA(parsetree, DiscardStmt))
	{
		DiscardMode target = ((DiscardStmt *) parsetree)->target;

		forgets_currval = target == DISCARD_ALL || target == DISCARD_SEQUENCES;
	}

	if (prev_ProcessUtility_hook)
		prev_ProcessUtility_hook(pstmt, queryString, readOnlyTree, context,
								 params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);

	if (forgets_currval)
		sf_forget_currval();
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
							"The timestamp gets id_bits - worker_bits - sequence_bits bits, which must be at least 35.",
							&snowflake_worker_bits,
							10,
							SNOWFLAKE_MIN_WORKER_BITS, SNOWFLAKE_MAX_WORKER_BITS,
							PGC_POSTMASTER,
							0,
							check_worker_bits, NULL, NULL);

	DefineCustomIntVariable("snowflake.sequence_bits",
							"Number of bits of an ID that count IDs within one millisecond.",
							"The timestamp gets id_bits - worker_bits - sequence_bits bits, which must be at least 35.",
							&snowflake_sequence_bits,
							12,
							SNOWFLAKE_MIN_SEQUENCE_BITS, SNOWFLAKE_MAX_SEQUENCE_BITS,
							PGC_POSTMASTER,
							0,
							check_sequence_bits, NULL, NULL);

	DefineCustomIntVariable("snowflake.id_bits",
							"Number of bits an ID may use, counted from the lowest.",
							"63 allows any positive bigint; 53 keeps every ID below 2^53, exact as a JavaScript number, for the layout's whole lifetime. The timestamp gets id_bits - worker_bits - sequence_bits bits.",
							&snowflake_id_bits,
							SNOWFLAKE_MAX_ID_BITS,
							SNOWFLAKE_MIN_ID_BITS, SNOWFLAKE_MAX_ID_BITS,
							PGC_POSTMASTER,
							0,
							check_id_bits, NULL, NULL);

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
	sf_load_epoch();
	sf_register_rmgr();
	sf_register_mark_writer();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = sf_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = sf_shmem_startup;
	prev_ProcessUtility_hook = ProcessUtility_hook;
	ProcessUtility_hook = sf_ProcessUtility;

	snowflake_preloaded = true;
}
