/*-------------------------------------------------------------------------
 *
 * lease.c
 *	  Worker ids from a registry database: the lease keeper.
 *
 * With snowflake.registry set (a libpq connection string), a server takes
 * its worker id from the registry database by itself, or, with
 * snowflake.worker_id set as well, takes that one only if no other server
 * holds it.  A background worker, "snowflake lease keeper", talks to the
 * registry through the functions snowflake.lease_claim, snowflake.lease_renew
 * and snowflake.lease_release (defined by the extension's SQL script, which
 * the registry database has installed; its library need not be loaded
 * there) and tells the generator (generator.c) what it may issue.  Callers
 * never wait on the network, except a call that reaches the ceiling, which
 * waits up to snowflake.max_wait for the keeper to renew.
 *
 * Why no two holders of a worker id issue the same ID
 * ---------------------------------------------------
 * The registry's row for each worker id holds a ceiling, an ID.  The SQL
 * script's comment on those functions gives the registry's half: the
 * ceiling only rises while one holder keeps the row; a claim hands the row
 * to a new holder and returns the ceiling as its fence; after a claim the
 * earlier holder's renewals change nothing.  This file keeps the holder's
 * half:
 *
 *	1. No ID above the ceiling a renewal returned is issued: the keeper
 *	   passes to the generator only ceilings that the registry confirmed
 *	   (a renewal that committed but whose answer was lost is as if it had
 *	   failed, which only ever makes the ceiling the generator obeys lower
 *	   than the registry's, never higher).
 *	2. Every ID issued under a lease lies above its fence: the generator
 *	   raises its last ID to the fence before it issues anything under the
 *	   new worker id (sf_install_lease), and IDs only increase on a server.
 *	3. At a release, the generator first stops issuing (sf_freeze_lease:
 *	   the ceiling falls to the last ID issued), and the registry lowers the
 *	   row's ceiling to that last ID, never below the fence.
 *
 * So when a later holder claims the worker id, every ID an earlier holder
 * issued is at or below the ceiling in force at the claim, which becomes the
 * later holder's fence, below all of its IDs.  None of it depends on
 * clocks: a later holder whose clock is behind starts above the fence all
 * the same (it then runs ahead of its clock, within snowflake.max_drift, or
 * waits), and an earlier holder that still runs, cut off from the registry
 * or unaware that its lease lapsed, stops at its last ceiling.  Leases
 * lapsing on the registry's clock decide only when a worker id may be taken
 * without proof that the claimant follows its holder.
 *
 * The holder's token and its proof
 * --------------------------------
 * Each server start draws a random token, its holder identity: claims and
 * renewals present it, and the registry keeps only its digest.  After a
 * claim, the worker id and the token are written to the lease file and a
 * WAL record (mark.c), so that a server restarting after a crash, or a
 * standby promoted to primary, presents the old token as proof that it
 * follows that holder, and takes the same worker id at once, fenced like any
 * claim.  A copy of the data directory carries the proof too: a copy started
 * with the same registry takes the worker id over from its original, which
 * stops at its last ceiling (and, with no worker id configured, claims
 * another).  Only a server's start uses the proof: a keeper that lost its
 * lease to another server never takes it back.
 *
 * Releasing at shutdown lowers the ceiling to the last ID, so that the next
 * start, which prefers the worker id of the lease file, continues right
 * after the last ID instead of up to snowflake.lease_time ahead.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "libpq-fe.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "pgtime.h"
#include "port.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "generator.h"
#include "layout.h"
#include "mark.h"
#include "snowflake.h"

PGDLLEXPORT void sf_lease_keeper_main(Datum main_arg);

/* The settings; see sf_lease_init() */
static char *registry_setting = NULL;
static int	lease_time_setting = 60000;

/* How long one exchange with the registry may take before it is given up. */
#define REGISTRY_TIMEOUT_MS		10000

/* How soon the keeper tries again after the registry failed or refused. */
#define RETRY_MIN_MS			500
#define RETRY_MAX_MS			5000

/* How long a release at shutdown may delay the shutdown. */
#define RELEASE_TIMEOUT_MS		2000

/* How long the postmaster waits before starting a keeper that exited. */
#define KEEPER_RESTART_S		1

/* The calls, with every name qualified and every argument typed. */
#define CHECK_SQL \
	"SELECT e.extversion, " \
	"pg_catalog.to_regprocedure('snowflake.lease_claim(bigint,text,text,integer,integer,uuid,integer,uuid,boolean)') IS NOT NULL " \
	"FROM pg_catalog.pg_extension e WHERE e.extname = 'snowflake'"
#define CLAIM_SQL \
	"SELECT worker_id, fence FROM snowflake.lease_claim(" \
	"$1::bigint, $2::text, $3::text, $4::integer, $5::integer, $6::uuid, " \
	"$7::integer, $8::uuid, $9::boolean)"
#define RENEW_SQL \
	"SELECT r.ceiling, " \
	"pg_catalog.round(pg_catalog.date_part('epoch', r.lease_expires) * 1000)::bigint " \
	"FROM snowflake.lease_renew($1::integer, $2::uuid, $3::bigint, $4::integer) AS r"
#define RELEASE_SQL \
	"SELECT snowflake.lease_release($1::integer, $2::uuid, $3::bigint)"

/* What the keeper knows between rounds (its own process only). */
typedef struct Keeper
{
	PGconn	   *conn;			/* to the registry, NULL if none */
	const SnowflakeLayout *layout;
	char		layout_text[128];	/* the layout as the registry records it */
	char		token[UUID_LEN * 2 + 5];	/* the holder's token, as text */
	int32		proof_worker;	/* the lease file's worker id, or -1 */
	char		proof[UUID_LEN * 2 + 5];	/* the lease file's token, or "" */
	bool		holding;		/* the generator issues under our lease */
	int64		worker;			/* the worker id held */
	TimestampTz renewed_at;		/* our clock at the last renewal */
	int			retry_ms;		/* the next wait after a failure */
	bool		releasing;		/* at shutdown: finish the release */
	SnowflakeLeaseStatus status;	/* as reported to the generator */
} Keeper;

/*
 * Define the settings, and when a registry is set, take worker ids from it
 * and register the keeper; called from _PG_init while preloading.
 */
void
sf_lease_init(void)
{
	BackgroundWorker worker;

	DefineCustomStringVariable("snowflake.registry",
							   "Connection string of the registry database that leases worker ids to this server.",
							   "Empty: the worker id is snowflake.worker_id alone. Set: the server takes its worker id from the registry (or, with snowflake.worker_id set, takes that one only if no other server holds it). Visible to superusers only.",
							   &registry_setting,
							   "",
							   PGC_POSTMASTER,
							   GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);

	DefineCustomIntVariable("snowflake.lease_time",
							"How long a worker-id lease lasts, and how far ahead of the clock its ceiling reaches.",
							"The server renews it every third of that; it goes on generating that long without the registry, and a server that takes over its worker id may start that far ahead of the clock.",
							&lease_time_setting,
							60000,
							1000, 86400000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	if (registry_setting == NULL || registry_setting[0] == '\0')
		return;

	sf_generator_use_leases();

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = KEEPER_RESTART_S;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "snowflake");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "sf_lease_keeper_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "snowflake lease keeper");
	snprintf(worker.bgw_type, BGW_MAXLEN, "snowflake lease keeper");
	RegisterBackgroundWorker(&worker);
}

/*
 * Reporting
 * ---------
 */

/* Tell the generator (and snowflake_stats) where the keeper stands. */
static void
report(Keeper *k, SnowflakeLeaseState state, const char *error)
{
	bool		changed = state != k->status.state ||
	strcmp(error ? error : "", k->status.error) != 0;

	k->status.state = state;
	strlcpy(k->status.error, error ? error : "", sizeof(k->status.error));
	sf_report_lease(&k->status);

	/* log changes, not every retry */
	if (changed && error != NULL)
		ereport(state == SNOWFLAKE_LEASE_UNREACHABLE && !k->holding ? LOG : WARNING,
				(errmsg("snowflake lease keeper: %s", error)));
}

/* A message from libpq or the registry, on one line of printable ASCII. */
static char *
one_line(const char *text)
{
	char	   *line = pstrdup(text ? text : "");
	char	   *p;

	for (p = line; *p != '\0'; p++)
		if (*p < 32 || *p > 126)
			*p = ' ';
	/* trailing spaces from libpq's final newline */
	for (p = line + strlen(line); p > line && p[-1] == ' '; p--)
		p[-1] = '\0';
	return line;
}

/* What the registry said, with its detail and hint. */
static char *
registry_said(const PGresult *res)
{
	const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
	const char *hint = PQresultErrorField(res, PG_DIAG_MESSAGE_HINT);

	return psprintf("the registry refused: %s%s%s%s%s",
					one_line(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY)),
					detail ? ". " : "", detail ? one_line(detail) : "",
					hint ? " " : "", hint ? one_line(hint) : "");
}

/*
 * Talking to the registry
 * -----------------------
 * Without blocking: the keeper waits on its latch and the socket together,
 * so that it answers the postmaster's signals while the registry is slow,
 * and gives up an exchange after REGISTRY_TIMEOUT_MS.
 */

static void
disconnect(Keeper *k)
{
	if (k->conn != NULL)
		PQfinish(k->conn);
	k->conn = NULL;
}

/*
 * Wait until the connection's socket is ready for "events", or the deadline
 * passes, or a shutdown is asked for (unless releasing): false then.
 */
static bool
wait_socket(Keeper *k, int events, TimestampTz deadline)
{
	for (;;)
	{
		long		left_ms = (long) ((deadline - GetCurrentTimestamp()) / 1000);
		int			rc;

		if (left_ms <= 0 || (ShutdownRequestPending && !k->releasing))
			return false;
		rc = WaitLatchOrSocket(MyLatch,
							   WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH | events,
							   PQsocket(k->conn), left_ms, PG_WAIT_EXTENSION);
		if (rc & WL_LATCH_SET)
			ResetLatch(MyLatch);
		if (rc & events)
			return true;
	}
}

/*
 * Wait for the whole answer to the query sent on k->conn and return its last
 * result (NULL if it had none; the caller clears it), or NULL with *error
 * set and the connection closed if the registry did not answer by the
 * deadline or the connection broke.
 */
static PGresult *
await_answer(Keeper *k, TimestampTz deadline, int timeout_ms, char **error)
{
	PGresult   *res = NULL;
	PGresult   *next;

	*error = NULL;
	for (;;)
	{
		while (PQisBusy(k->conn))
		{
			if (!wait_socket(k, WL_SOCKET_READABLE, deadline))
			{
				*error = psprintf("the registry did not answer within %d ms",
								  timeout_ms);
				break;
			}
			if (!PQconsumeInput(k->conn))
			{
				*error = psprintf("lost the connection to the registry: %s",
								  one_line(PQerrorMessage(k->conn)));
				break;
			}
		}
		if (*error != NULL)
		{
			PQclear(res);
			disconnect(k);
			return NULL;
		}
		next = PQgetResult(k->conn);
		if (next == NULL)
			return res;
		PQclear(res);
		res = next;
	}
}

/*
 * Connect to the registry and check that it can lease worker ids.  On
 * failure, *error says why, and *refused whether the registry answered
 * (it is not one that can lease) rather than could not be reached.
 */
static bool
registry_connect(Keeper *k, int timeout_ms, char **error, bool *refused)
{
	const char *keys[] = {"dbname", "fallback_application_name", NULL};
	const char *values[] = {registry_setting, "snowflake lease keeper", NULL};
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													   timeout_ms);
	PostgresPollingStatusType poll = PGRES_POLLING_WRITING;
	PGresult   *res;

	*refused = false;
	if (k->conn != NULL && PQstatus(k->conn) == CONNECTION_OK)
		return true;
	disconnect(k);

	k->conn = PQconnectStartParams(keys, values, true);
	if (k->conn == NULL)
	{
		*error = pstrdup("could not connect to the registry: out of memory");
		return false;
	}
	while (PQstatus(k->conn) != CONNECTION_BAD && poll != PGRES_POLLING_OK &&
		   poll != PGRES_POLLING_FAILED)
	{
		if (!wait_socket(k, poll == PGRES_POLLING_READING ?
						 WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE, deadline))
		{
			*error = psprintf("could not connect to the registry within %d ms",
							  timeout_ms);
			disconnect(k);
			return false;
		}
		poll = PQconnectPoll(k->conn);
	}
	if (PQstatus(k->conn) != CONNECTION_OK)
	{
		*error = psprintf("could not connect to the registry: %s",
						  one_line(PQerrorMessage(k->conn)));
		disconnect(k);
		return false;
	}

	/* the extension, new enough to lease */
	if (!PQsendQuery(k->conn, CHECK_SQL))
	{
		*error = psprintf("could not check the registry's snowflake extension: %s",
						  one_line(PQerrorMessage(k->conn)));
		disconnect(k);
		return false;
	}
	res = await_answer(k, deadline, timeout_ms, error);
	if (*error != NULL)
	{
		*error = psprintf("could not check the registry's snowflake extension: %s",
						  *error);
		return false;
	}
	*refused = res != NULL;
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
		*error = psprintf("could not check the registry's snowflake extension: %s",
						  res ? one_line(PQresultErrorMessage(res)) :
						  one_line(PQerrorMessage(k->conn)));
	else if (PQntuples(res) == 0)
		*error = psprintf("the registry database \"%s\" has no snowflake extension: create it there (CREATE EXTENSION snowflake), version 1.4 or later",
						  PQdb(k->conn));
	else if (strcmp(PQgetvalue(res, 0, 1), "t") != 0)
		*error = psprintf("the registry's snowflake extension is version %s, which cannot lease worker ids: update it there (ALTER EXTENSION snowflake UPDATE) to 1.4 or later",
						  PQgetvalue(res, 0, 0));
	else
	{
		PQclear(res);
		return true;
	}
	PQclear(res);
	disconnect(k);
	return false;
}

/*
 * Run one of the calls with text parameters and return its result (the
 * caller clears it), or NULL with *error set and *refused telling whether
 * the registry answered with an error (rather than not answering).
 */
static PGresult *
registry_call(Keeper *k, const char *sql, int nparams,
			  const char *const *params, int timeout_ms, char **error,
			  bool *refused)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													   timeout_ms);
	PGresult   *res;

	*refused = false;
	if (!registry_connect(k, timeout_ms, error, refused))
		return NULL;
	if (!PQsendQueryParams(k->conn, sql, nparams, NULL, params, NULL, NULL, 0))
	{
		*error = psprintf("could not send to the registry: %s",
						  one_line(PQerrorMessage(k->conn)));
		disconnect(k);
		return NULL;
	}
	res = await_answer(k, deadline, timeout_ms, error);
	if (*error != NULL)
		return NULL;
	if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK)
		return res;
	if (res != NULL && PQresultStatus(res) == PGRES_FATAL_ERROR &&
		PQresultErrorField(res, PG_DIAG_SQLSTATE) != NULL &&
		strncmp(PQresultErrorField(res, PG_DIAG_SQLSTATE), "08", 2) != 0 &&
		PQstatus(k->conn) == CONNECTION_OK)
	{
		*error = registry_said(res);
		*refused = true;
	}
	else
	{
		*error = psprintf("lost the connection to the registry: %s",
						  res ? one_line(PQresultErrorMessage(res)) :
						  one_line(PQerrorMessage(k->conn)));
		disconnect(k);
	}
	PQclear(res);
	return NULL;
}

/*
 * The protocol
 * ------------
 */

/* The layout as the registry compares it: widths, and the epoch in UTC. */
static void
describe_layout(const SnowflakeLayout *layout, char *buf, size_t size)
{
	int64		ms = layout->epoch / 1000;	/* whole milliseconds */
	int64		floor_s = ms / 1000 - (ms % 1000 < 0 ? 1 : 0);
	pg_time_t	seconds = (pg_time_t) (floor_s +
									   (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY);
	struct pg_tm *tm = pg_gmtime(&seconds);

	snprintf(buf, size,
			 "id_bits %d, worker_bits %d, sequence_bits %d, epoch %04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
			 layout->id_bits, layout->worker_bits, layout->sequence_bits,
			 tm->tm_year + 1900, tm->tm_mon + 1, tm->tm_mday,
			 tm->tm_hour, tm->tm_min, tm->tm_sec,
			 (int) (ms - floor_s * 1000));
}

/* A new random token, as text. */
static void
new_token(char *buf, size_t size)
{
	pg_uuid_t	uuid;

	if (!pg_strong_random(uuid.data, UUID_LEN))
		ereport(ERROR,
				(errmsg("could not generate a random token for the worker-id lease")));
	/* version 4, variant 1 */
	uuid.data[6] = (uuid.data[6] & 0x0f) | 0x40;
	uuid.data[8] = (uuid.data[8] & 0x3f) | 0x80;
	strlcpy(buf, DatumGetCString(DirectFunctionCall1(uuid_out,
													 UUIDPGetDatum(&uuid))),
			size);
}

/* A token in text back to its bytes, for the lease file. */
static pg_uuid_t *
token_bytes(const char *text)
{
	return DatumGetUUIDP(DirectFunctionCall1(uuid_in, CStringGetDatum(text)));
}

/* This server's label in the registry: cluster_name, else the host name. */
static char *
host_label(void)
{
	char		name[256];

	if (cluster_name != NULL && cluster_name[0] != '\0')
		return pstrdup(cluster_name);
	if (gethostname(name, sizeof(name)) == 0)
	{
		name[sizeof(name) - 1] = '\0';
		return pstrdup(name);
	}
	return NULL;
}

/*
 * The ceiling to ask for under worker id "worker": lease_time ahead of
 * whichever is later, the clock or the last ID issued, and at least the ID
 * a caller waits for.
 */
static int64
ceiling_to_ask(const SnowflakeLayout *layout, int64 worker, int64 last_id,
			   int64 wanted)
{
	int			shift = layout->worker_bits + layout->sequence_bits;
	int64		base = Max(sf_clock_ms(layout), last_id >> shift);
	int64		ts = Min(Max(base, 0) + lease_time_setting, layout->max_timestamp);
	int64		ceiling = sf_compose(layout, ts, worker, layout->max_sequence);

	return Max(ceiling, wanted);
}

/*
 * Renew the lease: raise its ceiling and extend it.  Returns false if the
 * registry could not be reached; a lease found taken over ends our holding.
 */
static bool
renew(Keeper *k)
{
	int64		last_id;
	int64		ceiling;
	int64		wanted;
	char	   *params[4];
	char	   *error;
	bool		refused;
	PGresult   *res;

	sf_lease_position(&last_id, &ceiling, &wanted);
	params[0] = psprintf(INT64_FORMAT, k->worker);
	params[1] = k->token;
	params[2] = psprintf(INT64_FORMAT,
						 ceiling_to_ask(k->layout, k->worker, last_id, wanted));
	params[3] = psprintf("%d", lease_time_setting);
	res = registry_call(k, RENEW_SQL, 4, (const char *const *) params,
						REGISTRY_TIMEOUT_MS, &error, &refused);
	if (res == NULL)
	{
		k->status.failures++;
		report(k, SNOWFLAKE_LEASE_UNREACHABLE,
			   psprintf("could not renew the lease of worker id " INT64_FORMAT ": %s",
						k->worker, error));
		return false;
	}
	if (PQntuples(res) == 0)
	{
		/* another server claimed it: keep issuing up to the last ceiling */
		PQclear(res);
		k->holding = false;
		report(k, SNOWFLAKE_LEASE_LOST,
			   psprintf("another server took over worker id " INT64_FORMAT "; this server issues IDs only up to its last ceiling, " INT64_FORMAT ", until it holds a lease again",
						k->worker, ceiling));
		return true;
	}
	ceiling = pg_strtoint64(PQgetvalue(res, 0, 0));
	/* milliseconds since 1970, whatever the registry's DateStyle */
	k->status.expires = (pg_strtoint64(PQgetvalue(res, 0, 1)) -
						 (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) *
						 SECS_PER_DAY * 1000) * 1000;
	PQclear(res);
	sf_raise_ceiling(ceiling);
	k->renewed_at = GetCurrentTimestamp();
	k->status.renewals++;
	report(k, SNOWFLAKE_LEASE_HELD, NULL);
	return true;
}

/*
 * Claim a worker id: the configured one, else the lease file's (with its
 * token as proof, at the first claim only), else any.  On success the
 * generator issues under it from the fence on, once a renewal has given a
 * ceiling.  Returns false if the registry could not be reached or refused.
 */
static bool
claim(Keeper *k)
{
	int			configured = k->layout->worker_id;
	char	   *params[9];
	char	   *error;
	bool		refused;
	PGresult   *res;
	int64		worker;
	int64		fence;

	params[0] = psprintf(UINT64_FORMAT, GetSystemIdentifier());
	params[1] = host_label();
	params[2] = k->layout_text;
	params[3] = psprintf("%d", k->layout->worker_bits);
	params[4] = psprintf("%d", lease_time_setting);
	params[5] = k->token;
	params[6] = configured != SNOWFLAKE_WORKER_ID_UNSET ?
		psprintf("%d", configured) :
		k->proof_worker >= 0 ? psprintf("%d", k->proof_worker) : NULL;
	params[7] = k->proof[0] != '\0' &&
		(configured == SNOWFLAKE_WORKER_ID_UNSET || configured == k->proof_worker) ?
		k->proof : NULL;
	params[8] = configured != SNOWFLAKE_WORKER_ID_UNSET ? "true" : "false";

	if (k->status.state != SNOWFLAKE_LEASE_LOST)
		report(k, SNOWFLAKE_LEASE_CLAIMING, NULL);
	res = registry_call(k, CLAIM_SQL, 9, (const char *const *) params,
						REGISTRY_TIMEOUT_MS, &error, &refused);
	if (res == NULL)
	{
		k->status.failures++;
		report(k, refused ? SNOWFLAKE_LEASE_REFUSED : SNOWFLAKE_LEASE_UNREACHABLE,
			   psprintf("could not take a worker id: %s", error));
		return false;
	}
	worker = pg_strtoint64(PQgetvalue(res, 0, 0));
	fence = pg_strtoint64(PQgetvalue(res, 0, 1));
	PQclear(res);

	/* the proof serves the first claim only: never take a lease back */
	k->proof[0] = '\0';
	k->proof_worker = -1;

	sf_persist_lease((int32) worker, token_bytes(k->token));
	k->worker = worker;
	k->holding = true;
	sf_install_lease(worker, fence);
	ereport(LOG,
			(errmsg("snowflake lease keeper: this server now holds worker id " INT64_FORMAT ", issuing IDs above " INT64_FORMAT,
					worker, fence)));
	return renew(k);
}

/* Release the lease at shutdown, so that the next holder starts right away. */
static void
release(Keeper *k)
{
	char	   *params[3];
	char	   *error;
	bool		refused;
	PGresult   *res;

	if (!k->holding)
		return;
	k->releasing = true;
	params[0] = psprintf(INT64_FORMAT, k->worker);
	params[1] = k->token;
	params[2] = psprintf(INT64_FORMAT, sf_freeze_lease());
	res = registry_call(k, RELEASE_SQL, 3, (const char *const *) params,
						RELEASE_TIMEOUT_MS, &error, &refused);
	if (res == NULL)
		ereport(LOG,
				(errmsg("snowflake lease keeper: could not release worker id " INT64_FORMAT ": %s",
						k->worker, error),
				 errdetail("The lease lapses by itself after snowflake.lease_time; this server takes the worker id back when it starts.")));
	PQclear(res);
}

/*
 * One round: claim or renew as due; returns how long to sleep, in ms.
 */
static long
keeper_round(Keeper *k)
{
	int64		last_id;
	int64		ceiling;
	int64		wanted;
	long		renew_every = lease_time_setting / 3;
	long		since_ms;
	int			shift = k->layout->worker_bits + k->layout->sequence_bits;
	bool		ok;

	if (!k->holding)
		ok = claim(k);
	else
	{
		sf_lease_position(&last_id, &ceiling, &wanted);
		since_ms = (long) ((GetCurrentTimestamp() - k->renewed_at) / 1000);

		/*
		 * Renew every third of the lease, sooner when a caller waits at the
		 * ceiling or the ceiling's lead fell under two thirds (a burst that
		 * borrowed ahead of the clock).
		 */
		if (wanted < 0 && since_ms >= 0 && since_ms < renew_every &&
			(ceiling >> shift) - Max(sf_clock_ms(k->layout), last_id >> shift) >=
			lease_time_setting - renew_every)
			return renew_every - since_ms;
		ok = renew(k);
	}

	if (!ok)
	{
		long		wait = k->retry_ms;

		k->retry_ms = Min(k->retry_ms * 2, Min(RETRY_MAX_MS, renew_every));
		return wait;
	}
	k->retry_ms = RETRY_MIN_MS;
	return k->holding ? renew_every : RETRY_MIN_MS;
}

/* On exit, callers stop setting the latch of a keeper that is gone. */
static void
detach_latch(int code, Datum arg)
{
	sf_set_lease_latch(NULL);
}

/*
 * The keeper's setup: the layout (an invalid one is reported and the keeper
 * waits for shutdown, as generation refuses anyway), the holder's token (a
 * keeper that restarted keeps its predecessor's lease), and the lease
 * file's proof.
 */
static bool
keeper_start(Keeper *k)
{
	MemoryContext context = CurrentMemoryContext;
	int64		worker;
	pg_uuid_t	proof;
	int32		proof_worker;

	memset(k, 0, sizeof(*k));
	k->proof_worker = -1;
	k->retry_ms = RETRY_MIN_MS;
	sf_get_lease(&k->status, &worker, NULL);

	PG_TRY();
	{
		k->layout = sf_layout();
		if (k->layout->worker_id != SNOWFLAKE_WORKER_ID_UNSET)
			sf_require_worker_id(k->layout);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(context);
		edata = CopyErrorData();
		FlushErrorState();
		report(k, SNOWFLAKE_LEASE_REFUSED,
			   psprintf("the settings cannot be used: %s %s", edata->message,
						edata->detail ? edata->detail : ""));
		return false;
	}
	PG_END_TRY();
	describe_layout(k->layout, k->layout_text, sizeof(k->layout_text));

	/*
	 * A connection string libpq cannot parse: its message may quote the
	 * string, password and all, so it goes to the server log only.
	 */
	if (strchr(registry_setting, '=') != NULL ||
		strncmp(registry_setting, "postgresql://", 13) == 0 ||
		strncmp(registry_setting, "postgres://", 11) == 0)
	{
		char	   *parse_error = NULL;
		PQconninfoOption *options = PQconninfoParse(registry_setting,
													&parse_error);

		if (options == NULL)
		{
			ereport(LOG,
					(errmsg("snowflake lease keeper: snowflake.registry is not a valid connection string: %s",
							parse_error ? one_line(parse_error) : "out of memory")));
			PQfreemem(parse_error);
			report(k, SNOWFLAKE_LEASE_REFUSED,
				   "snowflake.registry is not a valid libpq connection string (the server log says why); fix it and restart the server");
			return false;
		}
		PQconninfoFree(options);
	}

	if (k->status.has_token)
	{
		/* a keeper before this one held the lease: go on holding it */
		strlcpy(k->token, k->status.token, sizeof(k->token));
		k->worker = worker;
		k->holding = worker >= 0;
	}
	else
	{
		new_token(k->token, sizeof(k->token));
		strlcpy(k->status.token, k->token, sizeof(k->status.token));
		k->status.has_token = true;
		sf_report_lease(&k->status);
		if (sf_read_lease_file(&proof_worker, &proof))
		{
			k->proof_worker = proof_worker;
			strlcpy(k->proof, DatumGetCString(DirectFunctionCall1(uuid_out,
																  UUIDPGetDatum(&proof))),
					sizeof(k->proof));
		}
	}
	return true;
}

void
sf_lease_keeper_main(Datum main_arg)
{
	Keeper		k;
	bool		usable;
	MemoryContext round_context;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	/* no database: just enough to appear in pg_stat_activity */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	before_shmem_exit(detach_latch, (Datum) 0);
	sf_set_lease_latch(MyLatch);
	usable = keeper_start(&k);
	round_context = AllocSetContextCreate(TopMemoryContext,
										  "snowflake lease keeper",
										  ALLOCSET_DEFAULT_SIZES);

	while (!ShutdownRequestPending)
	{
		long		sleep_ms = -1;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(round_context);
		MemoryContextSwitchTo(round_context);
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (usable)
			sleep_ms = keeper_round(&k);

		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_EXIT_ON_PM_DEATH |
						 (sleep_ms >= 0 ? WL_TIMEOUT : 0),
						 sleep_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}

	if (usable)
		release(&k);
	disconnect(&k);

	/*
	 * Exit status 1, so that the postmaster starts the keeper again after
	 * KEEPER_RESTART_S unless the server is shutting down: after
	 * pg_terminate_backend() the new keeper takes the released lease back
	 * (or, if another server took it meanwhile, claims another).  Status 0
	 * would unregister the keeper, and the server would stay at the ceiling
	 * the release froze until it restarted.
	 */
	proc_exit(1);
}
