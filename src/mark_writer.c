/*-------------------------------------------------------------------------
 *
 * mark_writer.c
 *	  The background worker that writes the persisted mark ahead of need.
 *
 * Without it, a call that crosses the mark pays for the new mark's durable
 * write (an fsynced file, a directory sync and a WAL flush; mark.c) on top
 * of its own work, and under light traffic most calls would.  The worker,
 * "snowflake mark writer", is registered when the library is preloaded.
 * This file is only the process: its start, its signals and its sleep.  What
 * each round does, when it writes, how far ahead, and how its writes share
 * the callers' protocol, is sf_mark_writer_round() in generator.c, whose
 * header says it once ("Writing ahead of need").  An idle server writes no
 * WAL and no file because of the worker: between bursts it sleeps with no
 * timeout until a caller sets its latch.
 *
 * The guarantees never depend on it: a caller that reaches the mark writes
 * it itself, as it would without the worker.  If the worker errors, it exits
 * (the error becomes FATAL, and the write's cleanup clears the writing
 * flag) and the postmaster starts it again after MARK_WRITER_RESTART_S;
 * meanwhile callers write their own marks.  Killed outright, it makes the
 * postmaster reinitialize shared memory like any backend would.
 *
 * It starts once recovery has finished: never on a standby, which issues no
 * IDs, and on a standby once it is promoted.  SIGTERM (pg_terminate_backend,
 * a shutdown) ends it at the next interrupt check, after a write in progress
 * has finished.  It connects to no database: the mark is a file and a WAL
 * record, both outside any database, but it initializes its connection
 * (with none) so that it shows in pg_stat_activity.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"

#include "generator.h"
#include "snowflake.h"

PGDLLEXPORT void sf_mark_writer_main(Datum main_arg);

/* How long the postmaster waits before starting a worker that exited. */
#define MARK_WRITER_RESTART_S	5

/* Register the worker; called from _PG_init while preloading. */
void
sf_mark_writer_init(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = MARK_WRITER_RESTART_S;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "snowflake");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "sf_mark_writer_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "snowflake mark writer");
	snprintf(worker.bgw_type, BGW_MAXLEN, "snowflake mark writer");
	worker.bgw_main_arg = (Datum) 0;
	worker.bgw_notify_pid = 0;
	RegisterBackgroundWorker(&worker);
}

/* On exit, callers stop setting the latch of a worker that is gone. */
static void
detach_latch(int code, Datum arg)
{
	sf_set_ahead_latch(NULL);
}

void
sf_mark_writer_main(Datum main_arg)
{
	MarkWriterMemory memory = {.seen = -1};

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	/* no database: just enough to appear in pg_stat_activity */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	before_shmem_exit(detach_latch, (Datum) 0);
	sf_set_ahead_latch(MyLatch);

	for (;;)
	{
		long		sleep_ms;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		sleep_ms = sf_mark_writer_round(&memory);

		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_EXIT_ON_PM_DEATH |
						 (sleep_ms >= 0 ? WL_TIMEOUT : 0),
						 sleep_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
