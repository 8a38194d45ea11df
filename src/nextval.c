/*-------------------------------------------------------------------------
 *
 * nextval.c
 *	  SQL: drawing IDs (snowflake_nextval, snowflake_nextval(n)) and the
 *	  session's last one (snowflake_currval).
 *
 * snowflake_currval() returns the last ID snowflake_nextval() returned in
 * this session.  Like core currval(), it is per backend and not
 * transactional, and DISCARD SEQUENCES and DISCARD ALL forget it: a utility
 * hook, since PostgreSQL has no DISCARD callback for extensions.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"

#include "generator.h"
#include "layout.h"
#include "snowflake.h"

PG_FUNCTION_INFO_V1(snowflake_nextval);
PG_FUNCTION_INFO_V1(snowflake_nextval_batch);
PG_FUNCTION_INFO_V1(snowflake_currval);

/* The last ID snowflake_nextval() returned in this session. */
static int64 session_last_id;
static bool session_has_id = false;

static ProcessUtility_hook_type prev_ProcessUtility_hook = NULL;

Datum
snowflake_nextval(PG_FUNCTION_ARGS)
{
	int64		id = sf_next_id();

	session_last_id = id;
	session_has_id = true;
	PG_RETURN_INT64(id);
}

/* What snowflake_nextval(n) reserved, and how far it has returned it. */
typedef struct BatchState
{
	List	   *blocks;			/* SnowflakeBlock *, in order */
	ListCell   *current;		/* the block being returned */
	int64		next;			/* index of the next ID in it */
	int64		wait_started;	/* the clock when reserving first waited, or
								 * -1 (see sf_reserve) */
} BatchState;

/*
 * snowflake_nextval(n): n IDs, reserved on the first call under one
 * acquisition of the generator's lock (more only where the borrowing bound
 * or snowflake.max_drift cuts the run short: then it waits for the clock
 * between the pieces, all its waits together within snowflake.max_wait),
 * then returned one row at a time.  A batch that could not finish within
 * max_wait is refused before anything is reserved (sf_check_batch).  n = 0
 * returns no rows, but refuses wherever a call for IDs would.
 */
Datum
snowflake_nextval_batch(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;
	BatchState *batch;
	SnowflakeBlock *block;
	int64		id;

	if (SRF_IS_FIRSTCALL())
	{
		int32		n = PG_GETARG_INT32(0);
		MemoryContext oldcontext;

		if (n < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("number of snowflake IDs must not be negative"),
					 errdetail("Got %d.", n),
					 errhint("Pass how many IDs you need, or 0 for none.")));
		sf_check_batch(n);

		funcctx = SRF_FIRSTCALL_INIT();
		oldcontext = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		batch = palloc0(sizeof(BatchState));
		batch->wait_started = -1;
		/* n = 0 too takes a step: the same checks, and no IDs */
		do
		{
			block = palloc(sizeof(SnowflakeBlock));
			n -= sf_reserve(n, block, &batch->wait_started);
			if (block->count > 0)
				batch->blocks = lappend(batch->blocks, block);
		} while (n > 0);
		batch->current = list_head(batch->blocks);
		funcctx->user_fctx = batch;
		MemoryContextSwitchTo(oldcontext);
	}

	funcctx = SRF_PERCALL_SETUP();
	batch = funcctx->user_fctx;
	if (batch->current == NULL)
		SRF_RETURN_DONE(funcctx);

	block = lfirst(batch->current);
	id = sf_block_id(sf_layout(), block, batch->next++);
	if (batch->next == block->count)
	{
		batch->current = lnext(batch->blocks, batch->current);
		batch->next = 0;
	}

	session_last_id = id;
	session_has_id = true;
	SRF_RETURN_NEXT(funcctx, Int64GetDatum(id));
}

Datum
snowflake_currval(PG_FUNCTION_ARGS)
{
	sf_require_preload();
	if (!session_has_id)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake_currval is not yet defined in this session"),
				 errhint("Call snowflake_nextval() first.")));
	PG_RETURN_INT64(session_last_id);
}


/*
 * DISCARD SEQUENCES and DISCARD ALL forget what snowflake_currval() returns,
 * as core's DiscardCommand forgets currval()'s sequences.  The session's
 * value is forgotten only once the statement has run: DISCARD ALL refuses
 * inside a transaction block, and then core forgets nothing either.  Like
 * core's, forgetting is not undone if the transaction rolls back.
 */
static void
forget_currval_on_discard(PlannedStmt *pstmt, const char *queryString,
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
		session_has_id = false;
}

/* Install the DISCARD hook; called from _PG_init while preloading. */
void
sf_nextval_init(void)
{
	prev_ProcessUtility_hook = ProcessUtility_hook;
	ProcessUtility_hook = forget_currval_on_discard;
}
