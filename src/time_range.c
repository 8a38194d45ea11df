/*-------------------------------------------------------------------------
 *
 * time_range.c
 *	  SQL: the operator "id <@ tstzrange" and its planner support.
 *
 * "id <@ range" is true when the instant the ID stands for lies in the
 * tstzrange.  The IDs that satisfy it form one interval (see
 * range_id_bounds), so the support function rewrites the operator during
 * planning into two plain bigint comparisons, "id >= lo AND id <= hi".  The
 * planner then uses any btree index on the ID, estimates selectivity from
 * the column's statistics and prunes partitions that are ranges of IDs, all
 * with the built-in integer operators.  For a constant range, lo and hi are
 * computed at plan time (the layout cannot change while the server runs);
 * otherwise they are calls to snowflake_range_min_id() and
 * snowflake_range_max_id() on the range expression, which the executor
 * evaluates once per scan, and which also prune partitions at executor
 * startup.  The rewrite is exact, so no recheck is needed.
 *
 * The rewrite copies each argument into both comparisons, so it declines
 * an argument that is volatile or contains a sub-select: each copy would be
 * evaluated on its own, twice the work, and two runs of a volatile
 * expression, or of a sub-select with LIMIT and no ORDER BY, can give bounds
 * that belong to different ranges.  A declined range can still reach index
 * matching when it is an uncorrelated sub-select: the planner turns it into
 * an initplan (evaluated once) after the rewrite was offered, and
 * SupportRequestIndexCondition derives the same two comparisons as index
 * conditions from its result.  A correlated sub-select stays a SubPlan that
 * each bound would evaluate again, so there it declines too and the
 * operator filters row by row.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/stratnum.h"
#include "catalog/dependency.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "nodes/supportnodes.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rangetypes.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "layout.h"

PG_FUNCTION_INFO_V1(snowflake_in_range);
PG_FUNCTION_INFO_V1(snowflake_in_range_support);
PG_FUNCTION_INFO_V1(snowflake_range_min_id);
PG_FUNCTION_INFO_V1(snowflake_range_max_id);

/*
 * The IDs whose instant lies in a range, as the interval [*lo, *hi]; when
 * none can, *lo = 0 and *hi = -1, so that "id >= lo AND id <= hi" is false.
 *
 * IDs are ordered by their timestamp field m, and every bigint from
 * compose(m, 0, 0) to compose(m, max worker, max sequence) is an ID with
 * field m, so it is enough to find the first and last field whose instant,
 * epoch + m ms, lies in the range.  With d = (bound - epoch) in ms as a real
 * number:
 *
 *	lower bound, inclusive:  first m = ceil(d)
 *	lower bound, exclusive:  first m = floor(d) + 1
 *	upper bound, inclusive:  last m = floor(d)
 *	upper bound, exclusive:  last m = ceil(d) - 1
 *
 * A bound inside a millisecond thus excludes the ID of that millisecond on
 * the lower side and includes it on the upper side, whichever way the
 * bound is closed.  A missing bound, -infinity below or infinity above puts
 * no limit on that side; infinity below or -infinity above admits nothing.
 * Bounds beyond the lifetime are clamped to it rather than refused: the
 * predicate is exactly "the ID's instant lies in the range".
 */
static void
range_id_bounds(const SnowflakeLayout *layout, TypeCacheEntry *typcache,
				const RangeType *range, int64 *lo, int64 *hi)
{
	RangeBound	lower;
	RangeBound	upper;
	bool		empty;
	int64		first = 0;
	int64		last = layout->max_timestamp;
	bool		exact;

	*lo = 0;
	*hi = -1;

	range_deserialize(typcache, range, &lower, &upper, &empty);
	if (empty)
		return;

	if (!lower.infinite)
	{
		TimestampTz bound = DatumGetTimestampTz(lower.val);

		if (TIMESTAMP_IS_NOEND(bound))
			return;
		if (!TIMESTAMP_IS_NOBEGIN(bound))
		{
			int64		ms = sf_ms_since_epoch(layout, bound, &exact);

			first = (lower.inclusive && exact) ? ms : ms + 1;
			if (first < 0)
				first = 0;
		}
	}

	if (!upper.infinite)
	{
		TimestampTz bound = DatumGetTimestampTz(upper.val);

		if (TIMESTAMP_IS_NOBEGIN(bound))
			return;
		if (!TIMESTAMP_IS_NOEND(bound))
		{
			int64		ms = sf_ms_since_epoch(layout, bound, &exact);

			last = (upper.inclusive || !exact) ? ms : ms - 1;
			if (last > layout->max_timestamp)
				last = layout->max_timestamp;
		}
	}

	/* also catches first past the lifetime and last before it */
	if (first > last)
		return;

	*lo = sf_compose(layout, first, 0, 0);
	*hi = sf_compose(layout, last, layout->max_worker,
					 layout->max_sequence);
}

/* range_id_bounds() for a range argument of an SQL-callable function. */
static void
range_argument_bounds(FunctionCallInfo fcinfo, int argno, int64 *lo, int64 *hi)
{
	RangeType  *range = PG_GETARG_RANGE_P(argno);
	TypeCacheEntry *typcache = range_get_typcache(fcinfo,
												  RangeTypeGetOid(range));

	range_id_bounds(sf_layout(), typcache, range, lo, hi);
}

/*
 * id <@ range.  A negative bigint is not an ID and lies in no range, which
 * is also what the rewritten comparisons say.
 */
Datum
snowflake_in_range(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	int64		lo;
	int64		hi;

	range_argument_bounds(fcinfo, 1, &lo, &hi);
	PG_RETURN_BOOL(id >= lo && id <= hi);
}

/* The smallest ID whose instant lies in the range (0 if none can). */
Datum
snowflake_range_min_id(PG_FUNCTION_ARGS)
{
	int64		lo;
	int64		hi;

	range_argument_bounds(fcinfo, 0, &lo, &hi);
	PG_RETURN_INT64(lo);
}

/* The largest ID whose instant lies in the range (-1 if none can). */
Datum
snowflake_range_max_id(PG_FUNCTION_ARGS)
{
	int64		lo;
	int64		hi;

	range_argument_bounds(fcinfo, 0, &lo, &hi);
	PG_RETURN_INT64(hi);
}

static Const *
make_int8_const(int64 value)
{
	return makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
					 Int64GetDatum(value), false, FLOAT8PASSBYVAL);
}

/*
 * Another function of the extension, next to the operator's function
 * funcid: the function of that name and argument type in the schema of
 * that OID, and a member of the same extension.  Never by the schema's
 * name, which its owner may give to another schema, even between two
 * lookups; and its owner may put any function in it, but no function into
 * the extension.  InvalidOid if there is none, when the extension was
 * taken apart by hand (ALTER EXTENSION ... DROP FUNCTION).
 */
static Oid
sibling_function(Oid funcid, const char *name, Oid argtype)
{
	Oid			extension = getExtensionOfObject(ProcedureRelationId, funcid);
	HeapTuple	tuple;
	Oid			result = InvalidOid;

	if (!OidIsValid(extension))
		return InvalidOid;
	tuple = SearchSysCache3(PROCNAMEARGSNSP,
							CStringGetDatum(name),
							PointerGetDatum(buildoidvector(&argtype, 1)),
							ObjectIdGetDatum(get_func_namespace(funcid)));
	if (HeapTupleIsValid(tuple))
	{
		result = ((Form_pg_proc) GETSTRUCT(tuple))->oid;
		ReleaseSysCache(tuple);
	}
	if (OidIsValid(result) &&
		getExtensionOfObject(ProcedureRelationId, result) != extension)
		result = InvalidOid;
	return result;
}

/*
 * The expressions for the bounds of "id <@ rangearg": constants for a
 * constant range, else calls to snowflake_range_min_id/max_id.  funcid is
 * the operator's function, used to find its siblings.  False, for no
 * rewrite, if they are not there: the operator then filters row by row.
 */
static bool
bound_expressions(Oid funcid, Node *rangearg, Expr **lo, Expr **hi)
{
	if (IsA(rangearg, Const))
	{
		Const	   *c = (Const *) rangearg;
		RangeType  *range = DatumGetRangeTypeP(c->constvalue);
		TypeCacheEntry *typcache = lookup_type_cache(RangeTypeGetOid(range),
													 TYPECACHE_RANGE_INFO);
		int64		lo_id;
		int64		hi_id;

		Assert(!c->constisnull);
		range_id_bounds(sf_layout(), typcache, range, &lo_id, &hi_id);
		*lo = (Expr *) make_int8_const(lo_id);
		*hi = (Expr *) make_int8_const(hi_id);
	}
	else
	{
		Oid			minfunc = sibling_function(funcid, "snowflake_range_min_id", TSTZRANGEOID);
		Oid			maxfunc = sibling_function(funcid, "snowflake_range_max_id", TSTZRANGEOID);

		if (!OidIsValid(minfunc) || !OidIsValid(maxfunc))
			return false;
		*lo = (Expr *) makeFuncExpr(minfunc, INT8OID, list_make1(copyObject(rangearg)),
									InvalidOid, InvalidOid,
									COERCE_EXPLICIT_CALL);
		*hi = (Expr *) makeFuncExpr(maxfunc, INT8OID, list_make1(copyObject(rangearg)),
									InvalidOid, InvalidOid,
									COERCE_EXPLICIT_CALL);
	}
	return true;
}

/* "key op value" with the built-in bigint operator of a btree strategy. */
static Expr *
int8_comparison(Expr *key, int strategy, Expr *value)
{
	Oid			opno = get_opfamily_member(INTEGER_BTREE_FAM_OID,
										   INT8OID, INT8OID, strategy);
	OpExpr	   *op;

	if (!OidIsValid(opno))
		elog(ERROR, "missing operator for strategy %d of the bigint btree family",
			 strategy);
	op = (OpExpr *) make_opclause(opno, BOOLOID, false, key, value,
								  InvalidOid, InvalidOid);
	set_opfuncid(op);
	return (Expr *) op;
}

/*
 * SupportRequestSimplify: rewrite "id <@ range" as "id >= lo AND id <= hi",
 * or to a boolean constant when both sides are constants.  Declined when
 * either side is volatile, contains a sub-select (still a SubLink here) or
 * returns a set, since the rewrite evaluates each side twice.
 */
static Node *
simplify_in_range(FuncExpr *fcall)
{
	Node	   *idarg;
	Node	   *rangearg;
	Expr	   *lo;
	Expr	   *hi;

	if (list_length(fcall->args) != 2)
		return NULL;
	idarg = linitial(fcall->args);
	rangearg = lsecond(fcall->args);

	if (contain_volatile_functions(idarg) ||
		contain_volatile_functions(rangearg) ||
		contain_subplans(idarg) ||
		contain_subplans(rangearg) ||
		expression_returns_set(idarg) ||
		expression_returns_set(rangearg))
		return NULL;

	/* NULL constants were folded already: the function is strict */
	if ((IsA(idarg, Const) && ((Const *) idarg)->constisnull) ||
		(IsA(rangearg, Const) && ((Const *) rangearg)->constisnull))
		return NULL;

	if (!bound_expressions(fcall->funcid, rangearg, &lo, &hi))
		return NULL;

	if (IsA(idarg, Const) && IsA(rangearg, Const))
	{
		int64		id = DatumGetInt64(((Const *) idarg)->constvalue);
		int64		lo_id = DatumGetInt64(((Const *) lo)->constvalue);
		int64		hi_id = DatumGetInt64(((Const *) hi)->constvalue);

		return makeBoolConst(id >= lo_id && id <= hi_id, false);
	}

	return (Node *) make_andclause(list_make2(int8_comparison((Expr *) copyObject(idarg),
															  BTGreaterEqualStrategyNumber,
															  lo),
											  int8_comparison((Expr *) copyObject(idarg),
															  BTLessEqualStrategyNumber,
															  hi)));
}

/*
 * SupportRequestIndexCondition: for a btree index on a bigint ID, the index
 * conditions "id >= lo" and "id <= hi", which match the operator exactly.
 */
static List *
index_condition_in_range(SupportRequestIndexCondition *req)
{
	List	   *args;
	Node	   *idarg;
	Node	   *rangearg;
	Expr	   *lo;
	Expr	   *hi;

	if (is_opclause(req->node))
		args = ((OpExpr *) req->node)->args;
	else if (is_funcclause(req->node))
		args = ((FuncExpr *) req->node)->args;
	else
		return NIL;

	/* only the ID side can match an index column */
	if (list_length(args) != 2 || req->indexarg != 0 ||
		req->opfamily != INTEGER_BTREE_FAM_OID)
		return NIL;
	idarg = linitial(args);
	rangearg = lsecond(args);

	/*
	 * The comparison value must be computable before the scan starts, and
	 * evaluated once: both bounds are made from it, so a SubPlan (a
	 * correlated sub-select, which may be volatile inside) would run twice.
	 */
	if (contain_volatile_functions(rangearg) ||
		contain_subplans(rangearg) ||
		expression_returns_set(rangearg) ||
		bms_is_member(req->index->rel->relid, pull_varnos(req->root, rangearg)))
		return NIL;
	if (IsA(rangearg, Const) && ((Const *) rangearg)->constisnull)
		return NIL;

	if (!bound_expressions(req->funcid, rangearg, &lo, &hi))
		return NIL;
	req->lossy = false;
	return list_make2(int8_comparison((Expr *) copyObject(idarg),
									  BTGreaterEqualStrategyNumber, lo),
					  int8_comparison((Expr *) copyObject(idarg),
									  BTLessEqualStrategyNumber, hi));
}

Datum
snowflake_in_range_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);
	Node	   *ret = NULL;

	if (IsA(rawreq, SupportRequestSimplify))
		ret = simplify_in_range(((SupportRequestSimplify *) rawreq)->fcall);
	else if (IsA(rawreq, SupportRequestIndexCondition))
		ret = (Node *) index_condition_in_range((SupportRequestIndexCondition *) rawreq);

	PG_RETURN_POINTER(ret);
}
