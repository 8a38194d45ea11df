/*-------------------------------------------------------------------------
 *
 * generator.c
 *	  The server's one ID generator, in shared memory.
 *
 * Locking protocol
 * ----------------
 * One struct in shared memory holds the generator's state, guarded by one
 * LWLock of the named tranche "snowflake":
 *
 *	lock		protects every field of the state but mark_cv.
 *				sf_reserve() takes it exclusively, reads the wall
 *				clock, runs generator_step() and releases it.
 *				generator_step() is plain arithmetic (and, when a block
 *				would pass the borrowing bound, a reading of the
 *				monotonic clock): no I/O, no elog, no allocation, so the
 *				lock is held for a few dozen nanoseconds.
 *
 * Everything that can throw or sleep (errors, log lines, waiting for the
 * clock, writing the mark) happens with "lock" released.
 *
 * Writing a new mark (mark.c) takes a few milliseconds of fsyncs and a WAL
 * flush, and seconds when storage stalls, so no lock is held across it.
 * ensure_mark() is the one place that decides who writes and who waits:
 * under "lock", a backend that needs a mark above mark_id either finds
 * mark_writing clear, sets it and becomes the writer, or finds it set and
 * sleeps on the condition variable mark_cv, then looks again.  That sleep is
 * interruptible: a cancel or statement_timeout ends it with the usual
 * error.  The writer (write_mark()) makes the mark durable, then, under
 * "lock", raises mark_id, clears mark_writing and wakes every sleeper.  It
 * also clears the flag and wakes them when it leaves any other way: an
 * ERROR from the write, or the backend exiting in the middle of it (FATAL,
 * proc_exit), through PG_ENSURE_ERROR_CLEANUP, whose callback runs in both
 * cases.  A backend that dies without running it (killed, or a PANIC on a
 * failed fsync) makes the postmaster reinitialize shared memory, and the
 * flag with it.  After a failed write a sleeper becomes the next writer and
 * tries again, so no one waits for a write that nobody makes.
 *
 * Writing ahead of need
 * ---------------------
 * The background worker "snowflake mark writer" (mark_writer.c) keeps the mark
 * ahead while IDs are being issued, so that callers rarely cross it
 * themselves.  It runs sf_mark_writer_round() each time it wakes: while IDs
 * have been issued within the last MARK_WRITER_LINGER_MS, it writes the next
 * mark whenever the mark leads max(clock, last ID's timestamp) by less than
 * MARK_AHEAD_MS (more while its writes are slow), then sleeps until the lead
 * would run short again.  A caller that has just taken IDs and finds, under
 * "lock", the lead under MARK_AHEAD_MS already (a burst that borrowed ahead
 * of the clock, or the first call after a quiet spell) sets ahead_wanted
 * and, after releasing the lock, the worker's latch (ahead_latch, NULL while
 * no worker runs), so the worker runs a round at once; the caller writes
 * nothing itself.  The worker becomes the writer through the same
 * mark_writing flag, with the same write_mark() and the same cleanup as a
 * caller, so a caller that does cross the mark meanwhile waits for the
 * worker's write instead of writing a second one.  The worker's mark
 * reaches MARK_WINDOW_MS past max(clock, last ID's timestamp), no further
 * than a caller's mark would.  Nothing depends on the worker: a caller that
 * reaches the mark writes it as before.  MARK_WRITER_LINGER_MS after the
 * last ID the worker stops writing and sleeps until a caller wakes it: an
 * idle server writes nothing.
 *
 * Invariants, and why they hold
 * -----------------------------
 * The state is kept in ID space:
 *	last_id		every ID issued so far is <= last_id, and the next is > it
 *	mark_id		every ID issued so far is <= mark_id, which is durable
 *
 * A new ID is (last timestamp, last sequence + 1), or a later timestamp with
 * any sequence, so it is always > last_id (a batch reserves a run of such IDs
 * at once and moves last_id to the run's end); last_id is updated before
 * the lock is released.  Hence IDs strictly increase in the order callers
 * take the lock and no two callers get the same one.  An ID above mark_id
 * is never handed out: the caller first makes a new mark durable (the mark
 * file, then WAL; see mark.c), then retries.  After a restart or crash, and
 * on a standby replaying WAL, last_id and mark_id are raised to the
 * persisted mark (raise_floor()), so the first new ID lies above everything
 * issued before.  Comparing in ID space keeps this true even if the layout
 * or epoch were changed.
 *
 * The clock rules
 * ---------------
 * The timestamp is max(wall clock, last timestamp): a logical clock that
 * never goes backwards.  IDs run ahead of the wall clock for two reasons,
 * and two bounds hold for every ID issued:
 *
 *	drift		its timestamp is at most snowflake.max_drift ahead of the
 *				wall clock, whatever put it there (a step back of the
 *				clock, a restored mark, calls that borrowed);
 *	borrowing	its timestamp is at most max(E, F) + B, where
 *				B = min(snowflake.max_borrow, max_drift): calls that use
 *				up milliseconds (bursts, batches) run that far at most.
 *
 * E is the clock that does not step back: max(wall clock, anchor_ts +
 * monotonic time since anchor_mono_ns), and never below an earlier E.  The
 * anchor is set with shared memory and moved to (E, monotonic now)
 * whenever E is computed with the wall clock ahead of the anchor's
 * reckoning (or the monotonic clock reading below the anchor, which counts
 * as no time passed).  CLOCK_MONOTONIC is one clock for the whole system,
 * slewed by NTP like the wall clock but never stepped, so E runs at the
 * wall clock's rate, follows its steps forward and ignores its steps back.
 * est_ms holds the latest E, or a later wall reading taken since, so it is
 * never above E now: a block that ends within max(est_ms, F) + B is within
 * the bound (one that stays in the wall clock's current millisecond needs
 * no check at all), and only a block that would pass it reads the
 * monotonic clock (estimate_clock_ms(), which also refreshes est_ms).
 *
 * F is the timestamp of the floor that persistence raised, rather than
 * issuing: the mark read when shared memory is set up, and marks replayed
 * from WAL (raise_floor()).  After a restart with the clock behind the
 * mark, IDs continue above the mark as before, and may run B past it until
 * E catches up.
 *
 * Why E: a borrowing bound relative to the last ID would let every batch
 * push IDs a further B ahead; one relative to the wall clock would, after
 * a step back of 5 s, leave nothing to borrow until the wall clock caught
 * up with the last ID, so busy callers would wait and be refused for 5 s.
 * Relative to E, no call and no role, whatever it asks for, takes IDs more
 * than B ahead of the latest time the clock has shown (plus the time
 * since); a step back of the clock leaves that allowance as it was, and
 * max_drift - B stays free for the clock's own steps.
 *
 * A step whose first ID would pass either bound issues nothing: the caller
 * waits for the clock, without the lock, if it will catch up within
 * snowflake.max_wait (the waits of one batch counted together), and
 * otherwise gets an error; a block whose later IDs would pass a bound stops
 * short of it, and the caller asks again for the rest.  E runs at the rate
 * of real time even while the wall clock is behind, so waiting for the
 * borrowing bound takes as long as the excess.  Under the default settings
 * a single call therefore never refuses for borrowing (unless the clock is
 * behind a restored mark, where the bound stands still until E reaches F):
 * past the bound it waits about a millisecond, which paces generation to
 * the layout's capacity.  A batch that needs more ID time than B +
 * max_wait is refused before it reserves anything (sf_check_batch()).  No
 * ID ever carries a timestamp past the layout's lifetime.
 *
 * Where a millisecond's sequence starts
 * -------------------------------------
 * The first ID of a millisecond that no ID has used yet (the clock has
 * moved past last_id's timestamp) takes the sequence snowflake.sequence_start
 * says (first_sequence()); the IDs after it in that millisecond count up
 * by one, and when they run out the next millisecond is borrowed from
 * sequence 0.  So a burst, one call after another or one batch, runs
 * through consecutive positions whatever the start: 2^sequence_bits IDs per
 * millisecond of ID time, the first millisecond holding what the start left.
 *
 *	zero	sequence 0, as Twitter's generator.  At low rates nearly every
 *			ID has sequence 0: its low bits are the same for every ID
 *			issued one per millisecond or slower (every such ID is a
 *			multiple of 2^sequence_bits), so id % 16 puts them all in one
 *			bucket.
 *	spread	a hash of the timestamp and the worker id: the top
 *			sequence_bits bits of output number "timestamp" of SplitMix64
 *			(the generator of java.util.SplittableRandom) seeded with the
 *			worker id.  Successive milliseconds take successive outputs of
 *			a generator that passes BigCrush, so the starts are uniform
 *			over the sequence numbers and unrelated to each other and to
 *			other servers' starts, and id % 2^k for k <= sequence_bits is
 *			as even as a hash at any rate.  The default.
 *
 * Why a hash of the millisecond rather than the alternatives:
 *
 *	- Counting on across milliseconds (a new millisecond starts at the last
 *	  ID's sequence + 1) spreads all of a server's IDs exactly evenly, but a
 *	  table's IDs are only some of them: where an application issues IDs in
 *	  fixed groups (a row and the audit row its trigger writes; an order and
 *	  its three lines), each table's IDs advance by the group's size, so
 *	  with pairs one table gets only even sequences, and with fours a
 *	  quarter of the residues of id % 16.  It would also tell anyone who
 *	  sees two IDs how many the server issued between them (modulo
 *	  2^sequence_bits).  The hash is fixed per millisecond, so a table's
 *	  IDs spread whatever the pattern, and it says nothing about volume.
 *	- A random start (Meituan's Leaf draws one below 100, which is not even
 *	  over 1024 residues) spreads as well, but differs in every run, so no
 *	  test could check what a call returns; the hash is a function of the
 *	  ID's own timestamp and worker id.
 *
 * The cost is a few multiplications in a step that starts a millisecond,
 * none per ID, and borrowing sooner: a millisecond that starts at s holds
 * 2^sequence_bits - s IDs, so k IDs in one millisecond borrow the next one
 * with a chance of (k - 1) / 2^sequence_bits (under zero only beyond
 * 2^sequence_bits), and run one millisecond ahead of the clock.
 *
 * Either start keeps every invariant above: they rest on a new millisecond
 * being later than last_id's and on the sequence counting up within one,
 * whatever the start.  So the setting is reloadable, and backends that see
 * the old value for a moment after a reload do no harm.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "catalog/pg_authid.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "generator.h"
#include "layout.h"
#include "mark.h"
#include "snowflake.h"

/* The clock settings; see sf_generator_init() */
static int	max_drift_setting = 60000;
static int	max_borrow_setting = 1000;
static int	max_wait_setting = 1000;

/* snowflake.sequence_start: see "Where a millisecond's sequence starts" */
typedef enum SequenceStart
{
	SEQUENCE_START_ZERO,
	SEQUENCE_START_SPREAD
} SequenceStart;

static const struct config_enum_entry sequence_start_options[] = {
	{"zero", SEQUENCE_START_ZERO, false},
	{"spread", SEQUENCE_START_SPREAD, false},
	{NULL, 0, false}
};

static int	sequence_start_setting = SEQUENCE_START_SPREAD;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/*
 * How far ahead of the ID being issued a new mark reaches.  One durable
 * write per second of ID time costs nothing measurable, while after a crash
 * the first IDs run at most this far ahead of the clock, well inside the
 * default snowflake.max_drift.
 */
#define MARK_WINDOW_MS		1000

/*
 * When the mark leads the last ID (or the clock) by less than this, the
 * background mark writer writes the next one.  Each of its writes then
 * reaches MARK_WINDOW_MS ahead, so under steady traffic it writes about
 * once every MARK_WINDOW_MS - MARK_AHEAD_MS: a small lead left means fewer
 * durable writes competing with the calls' commits, and the lead is still
 * far longer than a mark write takes on storage that keeps up.
 */
#define MARK_AHEAD_MS		(MARK_WINDOW_MS / 10)

/*
 * On storage that is slow for a while (a busy disk can take hundreds of
 * milliseconds for one fsync), a write started with MARK_AHEAD_MS left
 * would end after calls need the mark, and they would wait for it.  So the
 * writer starts early enough for MARK_AHEAD_WRITES of its recent slowest
 * write, if that is more, up to MARK_AHEAD_MAX_MS (two writes a second).
 * It forgets a slow write by a tenth at each write after it, so it returns
 * to MARK_AHEAD_MS within thirty writes after the storage recovered.
 */
#define MARK_AHEAD_WRITES	4
#define MARK_AHEAD_MAX_MS	(MARK_WINDOW_MS / 2)

/*
 * How long after the last ID the mark writer goes on keeping the mark ahead
 * (about one mark a second), so that calls a few seconds apart find it
 * ahead; after that it writes nothing until IDs are issued again.
 */
#define MARK_WRITER_LINGER_MS	10000

/* The shortest sleep between two rounds of the mark writer. */
#define MARK_WRITER_MIN_SLEEP_MS	10

/*
 * Clocks get stepped back by seconds or hours; an ID more than a year ahead
 * of the clock almost always comes from a changed layout or epoch.
 */
#define LAYOUT_CHANGE_SUSPECT_MS	(INT64CONST(366) * 24 * 3600 * 1000)

/* The generator's state, in shared memory. */
typedef struct SnowflakeState
{
	LWLock	   *lock;			/* protects every field below but mark_cv */
	ConditionVariable mark_cv;	/* broadcast when a mark write ends */
	bool		mark_writing;	/* a backend is writing a new mark */
	int64		last_id;		/* the last ID issued (or floor), -1 if none */
	int64		mark_id;		/* the durable mark, -1 if none */
	bool		mark_unreadable;	/* the mark file could not be read */
	int64		last_clock;		/* the clock at the previous call */
	Latch	   *ahead_latch;	/* the mark writer's latch, NULL if none */
	bool		ahead_wanted;	/* a caller asked it for the next mark */
	uint64		issue_count;	/* calls that issued IDs; never reset */
	bool		ahead_sleeping; /* the writer sleeps until a caller wakes it */
	int64		floor_id;		/* the highest ID raised by persistence, or -1 */
	int64		est_ms;			/* E as last known (ms), never above E now */
	TimestampTz anchor_ts;		/* E at anchor_mono_ns */
	int64		anchor_mono_ns; /* the monotonic clock at anchor_ts */
	int64		worker;			/* the worker id in use, -1 if none */
	int64		ceiling;		/* no ID above it may be issued (a lease's) */
	int64		ceiling_wanted; /* the largest ID a caller waits to issue */
	ConditionVariable lease_cv; /* broadcast when the lease changes */
	Latch	   *lease_latch;	/* the lease keeper's latch, NULL if none */
	SnowflakeLeaseStatus lease; /* what the lease keeper last reported */
	SnowflakeStats stats;		/* counters, reset by snowflake_stats_reset */
} SnowflakeState;

/* What one locked step decided. */
typedef enum SnowflakeStep
{
	STEP_ISSUED,				/* a block of IDs was reserved */
	STEP_NEED_MARK,				/* *id would pass the durable mark */
	STEP_TOO_FAR_AHEAD,			/* the ID would pass max_drift */
	STEP_BORROW_LIMIT,			/* the ID would pass the borrowing bound */
	STEP_BEFORE_EPOCH,			/* the clock reads before the epoch */
	STEP_LIFETIME_ENDED,		/* the timestamp field is used up */
	STEP_MARK_UNREADABLE,		/* the persisted mark is unknown */
	STEP_NO_WORKER,				/* no lease has given a worker id yet */
	STEP_NEED_CEILING			/* *id would pass the lease's ceiling */
} SnowflakeStep;

static SnowflakeState *state = NULL;

/*
 * Whether worker ids come from leases (lease.c) rather than from
 * snowflake.worker_id alone: set by _PG_init, before shared memory is made.
 */
static bool worker_from_lease = false;

static Size
shmem_size(void)
{
	return MAXALIGN(sizeof(SnowflakeState));
}

static void
shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(shmem_size());
	RequestNamedLWLockTranche("snowflake", 1);
}

/*
 * With the lock held (or while shared memory is being set up): raise the
 * floor to an ID that persistence, not issuing, says may have been issued.
 * The next ID lies above it, and calls may borrow ahead of its timestamp as
 * of the clock's (see the clock rules above).
 */
static void
raise_floor(int64 id)
{
	if (id > state->last_id)
		state->last_id = id;
	if (id > state->floor_id)
		state->floor_id = id;
}

/*
 * The monotonic clock, in ns: one for the whole system, so comparable
 * between processes; slewed by NTP like the wall clock, but never stepped.
 * Should the read fail (POSIX requires this clock), it says that no time
 * passed since the anchor: E then rests on the wall clock and est_ms, which
 * only ever makes calls wait longer.
 */
static int64
monotonic_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return state->anchor_mono_ns;
	return (int64) ts.tv_sec * INT64CONST(1000000000) + ts.tv_nsec;
}

/*
 * With the lock held: E, the clock that does not step back, in ms since the
 * epoch (see the clock rules above), given "now", the wall clock the step
 * read.  It reads the monotonic clock, and leaves the anchor and est_ms up
 * to date.
 */
static int64
estimate_clock_ms(const SnowflakeLayout *layout, int64 now)
{
	TimestampTz wall = layout->epoch + now * 1000;
	int64		mono = monotonic_ns();
	int64		elapsed_ns = mono - state->anchor_mono_ns;
	TimestampTz est = state->anchor_ts + Max(elapsed_ns, 0) / 1000;
	bool		exact;
	int64		ms;

	/*
	 * Re-anchor where the wall clock is ahead of the anchor's reckoning (it
	 * stepped forward, or it is simply as far on), or where the monotonic
	 * clock reads below the anchor; while the wall clock is behind, the
	 * anchor stays, so E loses nothing to rounding however often it is read.
	 */
	if (wall >= est || elapsed_ns < 0)
	{
		est = Max(est, wall);
		state->anchor_ts = est;
		state->anchor_mono_ns = mono;
	}
	ms = sf_ms_since_epoch(layout, est, &exact);

	/*
	 * est_ms may be later still (a wall reading after a step forward that
	 * came after the anchor, then a step back): E never goes back.
	 */
	if (ms < state->est_ms)
	{
		ms = state->est_ms;
		state->anchor_ts = layout->epoch + ms * 1000;
		state->anchor_mono_ns = mono;
	}
	state->est_ms = ms;
	return ms;
}

/*
 * Attach to (or create) the shared state.  Shared memory is new after a
 * restart and after a crash, so the state starts from the persisted mark.
 */
static void
shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	state = ShmemInitStruct("snowflake", shmem_size(), &found);
	if (!found)
	{
		LWLockPadded *locks = GetNamedLWLockTranche("snowflake");
		int64		mark = -1;

		memset(state, 0, sizeof(SnowflakeState));
		state->lock = &locks[0].lock;
		ConditionVariableInit(&state->mark_cv);
		state->mark_unreadable = !sf_read_mark_file(&mark);
		state->last_id = -1;
		state->floor_id = -1;
		raise_floor(mark);
		state->mark_id = mark;
		state->last_clock = PG_INT64_MIN;
		state->est_ms = PG_INT64_MIN;
		state->anchor_ts = GetCurrentTimestamp();
		state->anchor_mono_ns = monotonic_ns();
		ConditionVariableInit(&state->lease_cv);
		if (worker_from_lease)
		{
			state->worker = -1;
			state->ceiling = -1;
			state->lease.state = SNOWFLAKE_LEASE_CLAIMING;
		}
		else
		{
			/* sf_reserve() checks that it is set and fits the layout */
			state->worker = sf_configured_worker_id();
			state->ceiling = PG_INT64_MAX;
			state->lease.state = SNOWFLAKE_LEASE_NONE;
		}
		state->ceiling_wanted = -1;
		state->stats.stats_reset = GetCurrentTimestamp();
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Define the clock settings and where a millisecond's sequence starts, and
 * ask for shared memory; called from _PG_init while preloading.
 */
void
sf_generator_init(void)
{
	DefineCustomIntVariable("snowflake.max_drift",
							"How far ahead of the wall clock an ID's timestamp may run.",
							"IDs run ahead when the clock steps back or a millisecond's sequence numbers are used up; 0 never runs ahead.",
							&max_drift_setting,
							60000,
							0, INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("snowflake.max_borrow",
							"How far ahead of the clock IDs may run because calls used up milliseconds.",
							"Bursts and batches borrow milliseconds ahead of the clock up to this bound (at most snowflake.max_drift), counted from a clock that ignores steps back; beyond it a call waits for the clock, within snowflake.max_wait.",
							&max_borrow_setting,
							1000,
							0, INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("snowflake.max_wait",
							"How long a call may wait for the clock to catch up before it fails.",
							"A call waits only when the next ID would run more than snowflake.max_drift ahead of the clock, or past snowflake.max_borrow.",
							&max_wait_setting,
							1000,
							0, INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("snowflake.sequence_start",
							 "Where the sequence of each new millisecond starts.",
							 "zero starts at 0, as Twitter's generator; spread starts at a hash of the millisecond and the worker id, so that the low bits of IDs are even at any rate.",
							 &sequence_start_setting,
							 SEQUENCE_START_SPREAD,
							 sequence_start_options,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = shmem_startup;
}

/*
 * The sequence of the first ID of millisecond "ts", which no ID has used
 * yet, under snowflake.sequence_start (see "Where a millisecond's sequence
 * starts" above): 0, or the top sequence_bits bits of SplitMix64's mix of
 * worker + ts * 0x9E3779B97F4A7C15 (modulo 2^64), its output number ts for
 * the seed worker.
 */
static int64
first_sequence(const SnowflakeLayout *layout, int64 worker, int64 ts)
{
	uint64		x;

	if (sequence_start_setting == SEQUENCE_START_ZERO)
		return 0;

	x = (uint64) ts * UINT64CONST(0x9E3779B97F4A7C15) + (uint64) worker;
	x = (x ^ (x >> 30)) * UINT64CONST(0xBF58476D1CE4E5B9);
	x = (x ^ (x >> 27)) * UINT64CONST(0x94D049BB133111EB);
	x ^= x >> 31;
	return (int64) (x >> (64 - layout->sequence_bits));
}

/*
 * Raise the floor and the mark to a persisted mark, during recovery (the
 * WAL redo of a mark record).  Values only ever go up.  Returns whether the
 * mark went up, that is, whether the mark file must be rewritten.
 */
bool
sf_raise_mark(int64 mark_id)
{
	bool		raised;

	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	raise_floor(mark_id);
	raised = mark_id > state->mark_id;
	if (raised)
		state->mark_id = mark_id;
	LWLockRelease(state->lock);
	return raised;
}

/*
 * With the lock held, for a block that borrows (it starts at ts, sequence
 * seq, ahead of the clock "now", or runs past now's millisecond): the last
 * timestamp it may reach, max(E, F) + borrow; or, if its first ID passes
 * that already, minus how many ms E must advance first.  The bound is
 * checked first with est_ms, which is never above E, so a block that ends
 * within it is within the bound; only a block that would end past it reads
 * E afresh.  Kept out of line (and free of pointers to the caller's
 * variables): most steps do not borrow.
 */
static pg_noinline int64
borrowing_limit(const SnowflakeLayout *layout, int64 now, int64 ts,
				int64 seq, int64 n, int64 borrow)
{
	int			shift = layout->worker_bits + layout->sequence_bits;
	int64		floor_ts = state->floor_id >> shift;
	int64		borrow_ts = Max(state->est_ms, floor_ts) + borrow;
	int64		est;

	if (ts + ((seq + Max(n, 1) - 1) >> layout->sequence_bits) <= borrow_ts)
		return borrow_ts;

	est = estimate_clock_ms(layout, now);
	borrow_ts = Max(est, floor_ts) + borrow;
	if (ts <= borrow_ts)
		return borrow_ts;

	/* E must reach ts - borrow, which lies above F */
	return -(ts - borrow - est);
}

/*
 * One step of the generator, with the lock held and "now" read under it:
 * reserve up to n (>= 0) consecutive IDs.
 *
 * IDs are handed out in "positions" (timestamp << sequence_bits | sequence),
 * so a block of IDs is a range of positions and reserving one costs the same
 * arithmetic whatever its size.  A block stops early where it would pass
 * max_drift, the borrowing bound or the layout's lifetime.
 *
 * On STEP_ISSUED, *block holds the reserved range (at least one ID, none
 * when n is 0: that call only runs the checks of the others).  On
 * STEP_NEED_MARK, *id is the block's last ID, which passes the durable mark;
 * on STEP_NEED_CEILING, the ceiling of the worker id's lease.  On
 * STEP_TOO_FAR_AHEAD and STEP_BORROW_LIMIT, *excess is how many ms the
 * clock must advance before a retry can succeed.  *stepped_back is how far
 * the clock went back since the previous call (0 if it did not), for the
 * caller to log once.  The worker id is the one in use (state->worker).
 */
static SnowflakeStep
generator_step(const SnowflakeLayout *layout, int64 now, int64 max_drift,
			   int64 max_borrow, int64 n, SnowflakeBlock *block, int64 *id,
			   int64 *excess,
			   int64 *stepped_back)
{
	int64		worker = state->worker;
	int			seq_bits = layout->sequence_bits;
	int			shift = layout->worker_bits + seq_bits;
	int64		last_ts = state->last_id >> shift;
	int64		last_worker = (state->last_id >> seq_bits) & layout->max_worker;
	int64		last_seq = state->last_id & layout->max_sequence;
	int64		ts;
	int64		seq;
	int64		limit_ts;
	int64		first;
	int64		last;
	bool		borrowed = false;

	*stepped_back = 0;
	if (now < state->last_clock)
	{
		*stepped_back = state->last_clock - now;
		state->stats.clock_rollbacks++;
		if (*stepped_back > state->stats.largest_rollback_ms)
			state->stats.largest_rollback_ms = *stepped_back;
	}
	state->last_clock = now;

	if (state->mark_unreadable)
		return STEP_MARK_UNREADABLE;
	if (worker < 0)
		return STEP_NO_WORKER;
	if (now < 0)
		return STEP_BEFORE_EPOCH;
	if (now > state->est_ms)
		state->est_ms = now;
	block->worker = worker;

	/* where the block starts: the first position above last_id */
	if (now > last_ts)
	{
		ts = now;
		seq = first_sequence(layout, worker, now);
	}
	else if (last_worker == worker && last_seq < layout->max_sequence)
	{
		ts = last_ts;
		seq = last_seq + 1;
	}
	else
	{
		/*
		 * This millisecond is used up (or last_id is a restored mark): borrow
		 * the next one.
		 */
		ts = last_ts + 1;
		seq = 0;
		borrowed = true;
	}

	if (ts - now > max_drift)
	{
		*excess = ts - now - max_drift;
		return STEP_TOO_FAR_AHEAD;
	}
	if (ts > layout->max_timestamp)
		return STEP_LIFETIME_ENDED;

	limit_ts = Min(now + max_drift, layout->max_timestamp);
	first = (ts << seq_bits) | seq;

	/* a block that starts ahead of the clock or runs past its millisecond */
	if (ts > now || seq + n > layout->max_sequence + 1)
	{
		int64		borrow_ts = borrowing_limit(layout, now, ts, seq, n,
												Min(max_borrow, max_drift));

		if (borrow_ts < 0)
		{
			*excess = -borrow_ts;
			return STEP_BORROW_LIMIT;
		}
		limit_ts = Min(limit_ts, borrow_ts);
	}

	/* a call for no IDs has passed every check: it reserves nothing */
	if (n == 0)
	{
		block->first = first;
		block->count = 0;
		return STEP_ISSUED;
	}

	/*
	 * where it ends: n positions on, unless the drift, the borrowing bound or
	 * the lifetime ends first
	 */
	last = first + Min(n, ((limit_ts << seq_bits) | layout->max_sequence) - first + 1) - 1;

	*id = sf_compose(layout, last >> seq_bits, worker,
					 last & layout->max_sequence);
	if (*id > state->ceiling)
	{
		if (*id > state->ceiling_wanted)
			state->ceiling_wanted = *id;
		return STEP_NEED_CEILING;
	}
	if (*id > state->mark_id)
		return STEP_NEED_MARK;

	state->last_id = *id;
	state->stats.ids_issued += last - first + 1;
	state->issue_count++;
	state->stats.borrows += (borrowed ? 1 : 0) + (last >> seq_bits) - ts;
	if ((last >> seq_bits) - now > state->stats.largest_drift_ms)
		state->stats.largest_drift_ms = (last >> seq_bits) - now;
	block->first = first;
	block->count = last - first + 1;
	return STEP_ISSUED;
}

/* Count a call that refuses. */
static void
count_refusal(void)
{
	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	state->stats.refusals++;
	LWLockRelease(state->lock);
}

/*
 * Count a refusal, then raise the error that explains it.  "ms" is how far
 * the next ID would be ahead of the clock for STEP_TOO_FAR_AHEAD, and how
 * much longer it would have to wait for the clock for STEP_BORROW_LIMIT.
 */
static void
refuse(SnowflakeStep step, const SnowflakeLayout *layout, int64 ms)
{
	int			shift = layout->worker_bits + layout->sequence_bits;
	int64		borrow = Min(max_borrow_setting, max_drift_setting);
	int64		floor_lead;

	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	state->stats.refusals++;
	/* est_ms is set by then: the step that refused read the clock */
	floor_lead = step == STEP_BORROW_LIMIT ?
		(state->floor_id >> shift) - state->est_ms : 0;
	LWLockRelease(state->lock);

	switch (step)
	{
		case STEP_TOO_FAR_AHEAD:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("system clock is too far behind the last snowflake ID"),
					 errdetail("The next ID would be " INT64_FORMAT " ms ahead of the clock, more than snowflake.max_drift (%d ms) allows, and the clock would not catch up within snowflake.max_wait (%d ms).",
							   ms, max_drift_setting, max_wait_setting),
					 ms > LAYOUT_CHANGE_SUSPECT_MS ?
					 errhint("A gap this large usually means snowflake.epoch, snowflake.worker_bits, snowflake.sequence_bits or snowflake.id_bits was changed after IDs were issued: new IDs must stay above the old ones, which under the new settings lie far in the future. Restore the previous settings and restart the server.") :
					 errhint("Check the system clock and its time synchronization; to keep issuing IDs while it catches up, raise snowflake.max_drift and reload.")));
			break;
		case STEP_BORROW_LIMIT:

			/*
			 * 53400: a limit that settings set, as when background worker
			 * slots run out; a later call, or other settings, succeed.
			 */
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("snowflake IDs are being drawn faster than the layout's capacity"),
					 floor_lead > 0 ?
					 errdetail("The clock is " INT64_FORMAT " ms behind the persisted mark that IDs resumed from; they may run " INT64_FORMAT " ms past it (snowflake.max_borrow, at most snowflake.max_drift) until the clock catches up, at " INT64_FORMAT " IDs per millisecond (snowflake.sequence_bits = %d), and the next ID would have to wait another " INT64_FORMAT " ms for the clock, which snowflake.max_wait (%d ms) does not allow.",
							   floor_lead, borrow, layout->max_sequence + 1,
							   layout->sequence_bits, ms, max_wait_setting) :
					 errdetail("The layout holds " INT64_FORMAT " IDs per millisecond (snowflake.sequence_bits = %d); IDs drawn faster than that may run " INT64_FORMAT " ms ahead of the clock (snowflake.max_borrow, at most snowflake.max_drift), and the next ID would have to wait another " INT64_FORMAT " ms for the clock, which snowflake.max_wait (%d ms) does not allow.",
							   layout->max_sequence + 1, layout->sequence_bits,
							   borrow, ms, max_wait_setting),
					 errhint("Draw IDs more slowly or in smaller batches; or raise snowflake.max_wait, so that calls wait for the clock, or snowflake.max_borrow, for longer bursts; a layout with more snowflake.sequence_bits holds more IDs per millisecond.")));
			break;
		case STEP_BEFORE_EPOCH:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("system clock is before snowflake.epoch"),
					 errdetail("snowflake.epoch is %s, and the clock reads %s.",
							   pstrdup(timestamptz_to_str(layout->epoch)),
							   pstrdup(timestamptz_to_str(GetCurrentTimestamp()))),
					 errhint("Fix the system clock, or set snowflake.epoch to an instant in the past in postgresql.conf and restart the server.")));
			break;
		case STEP_LIFETIME_ENDED:
			ereport(ERROR,
					(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
					 errmsg("snowflake layout has run out of timestamps"),
					 errdetail("With %d timestamp bits and snowflake.epoch %s, the last millisecond an ID can carry is %s.",
							   layout->timestamp_bits,
							   pstrdup(timestamptz_to_str(layout->epoch)),
							   pstrdup(timestamptz_to_str(sf_lifetime_end(layout)))),
					 errhint("A new epoch or layout changes the meaning of every ID: plan it as a migration.")));
			break;
		case STEP_NO_WORKER:
			{
				SnowflakeLeaseStatus lease;

				sf_get_lease(&lease, NULL, NULL);
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("this server has no snowflake worker id yet"),
						 errdetail("With snowflake.registry set, the server takes its worker id from a lease in the registry database, and it holds none: %s",
								   lease.error[0] != '\0' ? sf_lease_error_shown(&lease) :
								   "the lease keeper has not yet had an answer from the registry."),
						 errhint("Check that the database named by snowflake.registry can be reached and has the snowflake extension, version 1.4 or later; the lease keeper's lines in the server log say more.")));
			}
			break;
		case STEP_NEED_CEILING:
			{
				SnowflakeLeaseStatus lease;
				int64		worker;
				int64		ceiling;

				sf_get_lease(&lease, &worker, &ceiling);
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("snowflake IDs have reached the ceiling of this server's worker-id lease"),
						 errdetail("Under worker id " INT64_FORMAT " this server may issue IDs up to " INT64_FORMAT " until the registry raises that ceiling, and the next ID would be " INT64_FORMAT "; the lease keeper could not renew the lease within snowflake.max_wait (%d ms): %s",
								   worker, ceiling, ms, max_wait_setting,
								   lease.error[0] != '\0' ? sf_lease_error_shown(&lease) :
								   "the keeper is not running, or has had no answer from the registry in that time."),
						 errhint("Check the registry database named by snowflake.registry: IDs resume as soon as the lease is renewed.  snowflake.lease_time sets how long a server can go on generating without the registry.")));
			}
			break;
		case STEP_MARK_UNREADABLE:
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("snowflake mark file \"%s\" could not be read at server start",
							SNOWFLAKE_MARK_FILE),
					 errdetail("Without the persisted mark, new IDs could repeat IDs issued before the restart; the server log says what was wrong."),
					 errhint("Restore the file from a backup, or, if the clock is certainly past every ID ever issued here, remove it and restart the server.")));
			break;
		default:
			elog(ERROR, "unexpected snowflake step %d", (int) step);
	}
}

/*
 * The cleanup of a mark write that did not finish: clear the flag and wake
 * the backends waiting for it, one of which then writes the mark.  Run on an
 * ERROR from the write, or when the backend exits in the middle of it.
 */
static void
end_mark_write(int code, Datum arg)
{
	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	state->mark_writing = false;
	LWLockRelease(state->lock);
	ConditionVariableBroadcast(&state->mark_cv);
}

/*
 * Write a mark that covers "id" and the window after it, as the one writer
 * ensure_mark() or sf_mark_writer_round() chose, then publish it.  "ahead"
 * says which of the two counters it counts in.
 */
static void
write_mark(const SnowflakeLayout *layout, int64 id, bool ahead)
{
	int			shift = layout->worker_bits + layout->sequence_bits;
	int64		mark_ts = Min((id >> shift) + MARK_WINDOW_MS, layout->max_timestamp);
	int64		mark = sf_compose(layout, mark_ts, layout->max_worker,
								  layout->max_sequence);

	PG_ENSURE_ERROR_CLEANUP(end_mark_write, (Datum) 0);
	{
		sf_persist_mark(mark);
	}
	PG_END_ENSURE_ERROR_CLEANUP(end_mark_write, (Datum) 0);

	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	if (mark > state->mark_id)
		state->mark_id = mark;
	if (ahead)
		state->stats.marks_ahead++;
	else
		state->stats.marks_by_callers++;
	state->mark_writing = false;
	LWLockRelease(state->lock);
	ConditionVariableBroadcast(&state->mark_cv);
}

/* What a backend that needs a mark above mark_id does next. */
typedef enum MarkTurn
{
	MARK_COVERED,				/* the durable mark covers the ID by now */
	MARK_WRITE,					/* no write in progress: write one */
	MARK_WAIT					/* another backend is writing one: wait */
} MarkTurn;

/*
 * Return once a durable mark covers "id": the one place that decides who
 * writes a new mark and who waits for another backend's write (see the
 * locking protocol above).  The wait can be cancelled.
 */
static void
ensure_mark(const SnowflakeLayout *layout, int64 id)
{
	MarkTurn	turn;

	for (;;)
	{
		LWLockAcquire(state->lock, LW_EXCLUSIVE);
		if (state->mark_id >= id)
			turn = MARK_COVERED;
		else if (state->mark_writing)
			turn = MARK_WAIT;
		else
		{
			state->mark_writing = true;
			turn = MARK_WRITE;
		}
		LWLockRelease(state->lock);

		if (turn != MARK_WAIT)
			break;
		/* the first call only prepares to sleep, and we look again */
		ConditionVariableSleep(&state->mark_cv, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();

	if (turn == MARK_WRITE)
		write_mark(layout, id, false);
}

/*
 * How far the durable mark leads max(now, the last ID's timestamp), in ms.
 * Called with the lock held, once an ID has been issued (so both are set).
 */
static int64
mark_lead_ms(const SnowflakeLayout *layout, int64 now)
{
	int			shift = layout->worker_bits + layout->sequence_bits;

	return (state->mark_id >> shift) - Max(now, state->last_id >> shift);
}

/*
 * The mark writer (mark_writer.c) attaches its latch when it starts, and
 * detaches it (NULL) when it exits.
 */
void
sf_set_ahead_latch(Latch *latch)
{
	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	state->ahead_latch = latch;
	LWLockRelease(state->lock);
}

/*
 * Under the lock: whether the writer should write the next mark now, with
 * the mark's lead under ahead_ms, and if so the timestamp it covers from;
 * sets mark_writing when it should.
 */
static bool
claim_mark_ahead(const SnowflakeLayout *layout, int64 now, int64 ahead_ms,
				 int64 *base_ts)
{
	int			shift = layout->worker_bits + layout->sequence_bits;

	if (state->mark_writing || state->mark_unreadable ||
		state->last_id < 0 || state->mark_id < 0 ||
		mark_lead_ms(layout, now) >= ahead_ms ||
		(state->mark_id >> shift) >= layout->max_timestamp)
		return false;
	*base_ts = Min(Max(now, state->last_id >> shift), layout->max_timestamp);
	state->mark_writing = true;
	return true;
}

/*
 * One round of the mark writer (mark_writer.c), run each time it wakes.  While
 * IDs were issued within MARK_WRITER_LINGER_MS (memory->seen is the issue
 * count it saw last, memory->active_since when it last saw it change), or a
 * caller asked, it writes the next mark if the mark's lead has run short,
 * through the same flag and write_mark() as a caller that crosses the mark.
 * "Short" is MARK_AHEAD_MS, or more while its writes are slow.  Returns how
 * long to sleep before the next round, in ms: until the lead would run short
 * again (or the lingering ends), or -1 to sleep until a caller wakes it.
 * The layout is read only once IDs were issued, which proves it valid.
 */
long
sf_mark_writer_round(MarkWriterMemory *memory)
{
	const SnowflakeLayout *layout;
	TimestampTz now_ts = GetCurrentTimestamp();
	int64		count;
	bool		wanted;
	int64		lingered_ms;
	int64		ahead_ms;
	int64		now;
	int64		base_ts = 0;
	int64		lead;
	bool		sleep;
	bool		write;

	/*
	 * Decide, under the same lock as callers count their calls, whether to go
	 * to sleep: a call either is seen here or finds ahead_sleeping set and
	 * wakes the writer.
	 */
	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	count = (int64) state->issue_count;
	wanted = state->ahead_wanted;
	state->ahead_wanted = false;
	/* in the first round, IDs issued before do not count */
	if (memory->seen < 0)
		memory->seen = count;
	else if (count != memory->seen)
	{
		memory->seen = count;
		memory->active_since = now_ts;
	}
	lingered_ms = (now_ts - memory->active_since) / 1000;
	sleep = (!wanted &&
			 (memory->active_since == 0 || lingered_ms < 0 ||
			  lingered_ms >= MARK_WRITER_LINGER_MS));
	state->ahead_sleeping = sleep;
	LWLockRelease(state->lock);
	if (sleep)
		return -1;

	ahead_ms = Min(Max(MARK_AHEAD_MS,
					   MARK_AHEAD_WRITES * memory->slow_write_ms),
				   MARK_AHEAD_MAX_MS);
	layout = sf_layout();
	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	write = claim_mark_ahead(layout, sf_clock_ms(layout), ahead_ms, &base_ts);
	LWLockRelease(state->lock);
	if (write)
	{
		TimestampTz started = GetCurrentTimestamp();

		write_mark(layout, sf_compose(layout, base_ts, 0, 0), true);
		memory->slow_write_ms = Max((GetCurrentTimestamp() - started) / 1000,
									memory->slow_write_ms * 9 / 10);
	}

	/* sleep until the lead runs short, but not past the lingering */
	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	now = sf_clock_ms(layout);
	lead = (state->last_id >= 0 && state->mark_id >= 0) ?
		mark_lead_ms(layout, now) : MARK_WINDOW_MS;
	LWLockRelease(state->lock);
	return (long) Max(Min(lead - ahead_ms,
						  MARK_WRITER_LINGER_MS - Max(lingered_ms, 0)),
					  MARK_WRITER_MIN_SLEEP_MS);
}

/* Count a call that waited for the clock since wait_started. */
static void
count_wait(TimestampTz wait_started)
{
	int64		us = GetCurrentTimestamp() - wait_started;

	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	state->stats.waits++;
	state->stats.wait_us += us;
	LWLockRelease(state->lock);
}

/*
 * Sleep for the clock to catch up by "ms" milliseconds, without the lock.
 * Cancellable, and ends with the server.
 */
static void
wait_for_clock(int64 ms)
{
	(void) WaitLatch(MyLatch,
					 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 (long) ms, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

/*
 * Wait until the lease changes so that a step may issue "id" (its ceiling
 * covers it, or a new lease gave another worker id), or until
 * snowflake.max_wait has passed since wait_started: false if it did not.
 * The lease keeper is woken to renew the lease at once.  Cancellable.
 */
static bool
wait_for_ceiling(int64 id, TimestampTz wait_started)
{
	Latch	   *keeper;
	int64		worker;
	bool		changed = false;

	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	keeper = state->lease_latch;
	worker = state->worker;
	LWLockRelease(state->lock);
	if (keeper != NULL)
		SetLatch(keeper);

	ConditionVariablePrepareToSleep(&state->lease_cv);
	for (;;)
	{
		long		left_ms;

		LWLockAcquire(state->lock, LW_SHARED);
		changed = state->ceiling >= id || state->worker != worker;
		LWLockRelease(state->lock);
		left_ms = max_wait_setting -
			(long) ((GetCurrentTimestamp() - wait_started) / 1000);
		if (changed || left_ms <= 0)
			break;
		(void) ConditionVariableTimedSleep(&state->lease_cv, left_ms,
										   PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
	return changed;
}

/*
 * Reserve up to n IDs under one acquisition of the lock, waiting for the
 * clock if the clock rules say so; returns how many *block holds (fewer
 * than n only where max_drift, the borrowing bound or the lifetime cut the
 * block short, in which case the caller asks again for the rest).  Raises
 * an error if the settings are unusable, the server is a standby or the
 * transaction read-only, or the clock would not catch up within
 * snowflake.max_wait.  If wait_started is not NULL, *wait_started is the
 * clock (in ms since the epoch, as the steps read it) when the caller first
 * had to wait for it, -1 until then: a batch passes the same one to every
 * call, so that all its waits together count against max_wait; with NULL,
 * the waits of this call count.  The time waited is measured with the
 * steps' own clock readings, as the excess is, so a batch that the clock
 * rules let finish within max_wait is not refused for time spent between
 * a step and the reading of the clock.  For n = 0 it reserves nothing,
 * after the same checks (and waits) as for n = 1.
 */
int64
sf_reserve(int64 n, SnowflakeBlock *block, int64 *wait_started)
{
	const SnowflakeLayout *layout = sf_layout();
	TimestampTz first_wait = 0;
	int64		own_wait_started = -1;
	bool		slept = false;

	Assert(state != NULL);
	Assert(n >= 0);

	/* a single call counts its waits from its own first one */
	if (wait_started == NULL)
		wait_started = &own_wait_started;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot generate snowflake IDs during recovery"),
				 errdetail("A standby replays the primary's marks but issues no IDs of its own."),
				 errhint("Generate IDs on the primary; once promoted, this server issues IDs above every mark it replayed.")));
	PreventCommandIfReadOnly("snowflake_nextval()");

	/* the configured worker id: an error if it is unset or does not fit */
	if (!worker_from_lease)
		sf_require_worker_id(layout);

	for (;;)
	{
		SnowflakeStep step;
		int64		id = 0;
		int64		excess = 0;
		int64		stepped_back;
		int64		waited;
		int64		now;
		Latch	   *wake = NULL;

		LWLockAcquire(state->lock, LW_EXCLUSIVE);
		now = sf_clock_ms(layout);
		step = generator_step(layout, now, max_drift_setting,
							  max_borrow_setting, n, block, &id, &excess,
							  &stepped_back);

		/*
		 * Wake the mark writer if it sleeps, or if the mark's lead is under
		 * the least it ever leaves: it then writes the next mark.
		 */
		if (step == STEP_ISSUED && block->count > 0 &&
			state->ahead_latch != NULL && !state->ahead_wanted &&
			(state->ahead_sleeping ||
			 (!state->mark_writing &&
			  mark_lead_ms(layout, now) < MARK_AHEAD_MS)))
		{
			state->ahead_wanted = true;
			state->ahead_sleeping = false;
			wake = state->ahead_latch;
		}
		LWLockRelease(state->lock);

		/*
		 * No system call unless the writer sleeps.  Should the writer exit
		 * meanwhile, its PGPROC's latch may belong to another process by now,
		 * which merely wakes up once for nothing.
		 */
		if (wake != NULL)
			SetLatch(wake);

		if (stepped_back > 0)
			ereport(LOG,
					(errmsg("snowflake: system clock moved back by " INT64_FORMAT " ms",
							stepped_back),
					 errdetail("IDs continue from the last issued timestamp while it stays within snowflake.max_drift (%d ms) of the clock.",
							   max_drift_setting)));

		switch (step)
		{
			case STEP_ISSUED:
				if (slept)
					count_wait(first_wait);
				return block->count;

			case STEP_NEED_MARK:
				ensure_mark(layout, id);
				break;

			case STEP_NEED_CEILING:
				if (first_wait == 0)
					first_wait = GetCurrentTimestamp();
				if (!wait_for_ceiling(id, first_wait))
				{
					count_wait(first_wait);
					refuse(step, layout, id);
				}
				slept = true;
				break;

			case STEP_TOO_FAR_AHEAD:
			case STEP_BORROW_LIMIT:
				if (first_wait == 0)
					first_wait = GetCurrentTimestamp();
				if (*wait_started < 0)
					*wait_started = now;
				waited = now - *wait_started;
				if (waited + excess > max_wait_setting)
				{
					/* a call that waited and still fails counts as a wait too */
					if (slept)
						count_wait(first_wait);
					refuse(step, layout,
						   step == STEP_TOO_FAR_AHEAD ?
						   excess + max_drift_setting : excess);
				}
				wait_for_clock(excess);
				slept = true;
				break;

			default:
				refuse(step, layout, 0);
		}
	}
}

/*
 * Refuse a batch of n IDs, before anything is reserved, if it needs more ID
 * time than a call may borrow ahead of the clock and wait for: n IDs take
 * n / 2^sequence_bits ms, rounded up, and a batch may borrow
 * min(max_borrow, max_drift) and wait max_wait for the rest (so a batch
 * that fits is refused later only if other calls borrowed the time
 * meanwhile).  A batch within one millisecond's capacity always passes
 * this check, even with nothing to borrow or wait for: it needs neither
 * while the current millisecond has room.
 *
 * This is what a bulk loader wants.  Rows loaded with single calls are
 * never refused for borrowing under the default settings: past the bound
 * each call waits about a millisecond, which paces the load to the layout's
 * capacity.  A batch too big to finish within max_wait fails at once and
 * says how many IDs one call may ask for, so the loader splits it, rather
 * than holding the generator's capacity (every other caller waiting behind
 * it) for as long as it takes, or failing after it has waited max_wait.
 */
void
sf_check_batch(int64 n)
{
	const SnowflakeLayout *layout = sf_layout();
	int64		borrow = Min(max_borrow_setting, max_drift_setting);
	int64		fits_ms = Max(borrow + max_wait_setting, 1);
	int64		need_ms = (n + layout->max_sequence) >> layout->sequence_bits;
	int64		largest;

	Assert(n >= 0);
	if (need_ms <= fits_ms)
		return;

	largest = Min(fits_ms << layout->sequence_bits, PG_INT32_MAX);
	count_refusal();

	/* 53400: see STEP_BORROW_LIMIT in refuse() */
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("snowflake_nextval(" INT64_FORMAT ") asks for more IDs than one call may take", n),
			 errdetail(INT64_FORMAT " IDs take " INT64_FORMAT " ms of ID time at " INT64_FORMAT " IDs per millisecond (snowflake.sequence_bits = %d); a call may run " INT64_FORMAT " ms ahead of the clock (snowflake.max_borrow, at most snowflake.max_drift) and wait %d ms for it (snowflake.max_wait), so at most " INT64_FORMAT " IDs fit in one call.",
					   n, need_ms, layout->max_sequence + 1,
					   layout->sequence_bits, borrow, max_wait_setting,
					   largest),
			 errhint("Ask for at most " INT64_FORMAT " IDs at a time, or raise snowflake.max_wait to let a call wait longer for the clock.",
					 largest)));
}

/* The i-th ID (from 0) of a reserved block. */
int64
sf_block_id(const SnowflakeLayout *layout, const SnowflakeBlock *block,
			int64 i)
{
	int64		pos = block->first + i;

	Assert(i >= 0 && i < block->count);
	return sf_compose(layout, pos >> layout->sequence_bits,
					  block->worker, pos & layout->max_sequence);
}

/* Issue the next ID: a block of one. */
int64
sf_next_id(void)
{
	SnowflakeBlock block;

	(void) sf_reserve(1, &block, NULL);
	return sf_block_id(sf_layout(), &block, 0);
}

/*
 * A consistent copy of the counters and the state they describe.  drift_ms
 * is how far the last ID's timestamp is ahead of the clock now.
 */
void
sf_get_stats(SnowflakeStats *stats, int64 *last_id, int64 *mark_id,
			 int64 *drift_ms)
{
	const SnowflakeLayout *layout = sf_layout();
	int			shift = layout->worker_bits + layout->sequence_bits;

	LWLockAcquire(state->lock, LW_SHARED);
	*stats = state->stats;
	*last_id = state->last_id;
	*mark_id = state->mark_id;
	LWLockRelease(state->lock);

	*drift_ms = *last_id < 0 ? 0 :
		Max((*last_id >> shift) - sf_clock_ms(layout), 0);
}

void
sf_reset_stats(void)
{
	sf_require_preload();

	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	memset(&state->stats, 0, sizeof(SnowflakeStats));
	state->stats.stats_reset = GetCurrentTimestamp();
	LWLockRelease(state->lock);
}

/*
 * Leases
 * ------
 * With snowflake.registry set, the lease keeper (lease.c) gives the
 * generator its worker id, the fence the new IDs must stay above, and the
 * ceiling they must not pass; lease.c's header argues why that keeps any
 * two holders of one worker id apart.  Here the generator only obeys: no
 * worker id, no IDs (STEP_NO_WORKER); an ID above the ceiling waits for the
 * keeper to raise it, up to snowflake.max_wait (STEP_NEED_CEILING).  The
 * check costs one comparison per step; everything that talks to the
 * registry happens in the keeper's process.
 */

/*
 * The keeper's last problem as the current role may see it.  The registry's
 * and libpq's messages can name hosts, users, and parts of the connection
 * string, which only superusers may read (snowflake.registry is
 * GUC_SUPERUSER_ONLY); other roles learn only that there is a problem and
 * where to read it.
 */
const char *
sf_lease_error_shown(const SnowflakeLeaseStatus *lease)
{
	if (lease->error[0] == '\0' ||
		has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_SETTINGS))
		return lease->error;
	return "the lease keeper reported a problem with the registry, which superusers and members of pg_read_all_settings can read in snowflake_stats.lease_error and in the server log";
}

/* Worker ids come from leases; called from _PG_init while preloading. */
void
sf_generator_use_leases(void)
{
	worker_from_lease = true;
}

/* The keeper attaches its latch when it starts, and detaches it on exit. */
void
sf_set_lease_latch(Latch *latch)
{
	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	state->lease_latch = latch;
	LWLockRelease(state->lock);
}

/*
 * Issue IDs under worker id "worker" from now on: above "fence" (and above
 * every ID issued here before, as always), and up to the ceiling that the
 * first renewal sets; until then the ceiling is the fence.  The fence is a
 * floor raised by persistence (the registry's), so a takeover that starts
 * ahead of the clock may borrow from there, as after a restart.
 */
void
sf_install_lease(int64 worker, int64 fence)
{
	Assert(worker_from_lease);

	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	raise_floor(fence);
	state->worker = worker;
	state->ceiling = fence;
	LWLockRelease(state->lock);
	ConditionVariableBroadcast(&state->lease_cv);
}

/* The lease was renewed: IDs may go up to "ceiling". */
void
sf_raise_ceiling(int64 ceiling)
{
	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	if (ceiling > state->ceiling)
		state->ceiling = ceiling;
	LWLockRelease(state->lock);
	ConditionVariableBroadcast(&state->lease_cv);
}

/*
 * Issue no more IDs under the lease, so that it can be released: the
 * ceiling falls to the last ID issued, which is returned.
 */
int64
sf_freeze_lease(void)
{
	int64		last_id;

	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	last_id = state->last_id;
	if (last_id < state->ceiling)
		state->ceiling = last_id;
	LWLockRelease(state->lock);
	return last_id;
}

/*
 * What the keeper needs to ask for the next ceiling: the last ID issued,
 * the ceiling, and the largest ID a caller waits to issue (-1 if none).
 */
void
sf_lease_position(int64 *last_id, int64 *ceiling, int64 *wanted)
{
	LWLockAcquire(state->lock, LW_SHARED);
	*last_id = state->last_id;
	*ceiling = state->ceiling;
	*wanted = state->ceiling_wanted > state->ceiling ?
		state->ceiling_wanted : -1;
	LWLockRelease(state->lock);
}

/* The keeper's report, shown by snowflake_stats and in refusals. */
void
sf_report_lease(const SnowflakeLeaseStatus *lease)
{
	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	state->lease = *lease;
	LWLockRelease(state->lock);
}

/*
 * A copy of the keeper's last report, and (when not NULL) the worker id in
 * use and the ceiling.
 */
void
sf_get_lease(SnowflakeLeaseStatus *lease, int64 *worker, int64 *ceiling)
{
	LWLockAcquire(state->lock, LW_SHARED);
	*lease = state->lease;
	if (worker != NULL)
		*worker = state->worker;
	if (ceiling != NULL)
		*ceiling = state->ceiling;
	LWLockRelease(state->lock);
}
