/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  The one place that hides differences between PostgreSQL versions.
 *
 * Built and tested here against PostgreSQL 15 only; the shims below cover
 * the API changes we know of so that other versions have one place to grow.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_COMPAT_H
#define SNOWFLAKE_COMPAT_H

#include "utils/datetime.h"

#if PG_VERSION_NUM < 150000
#error "snowflake needs PostgreSQL 15 or later"
#endif

/* PostgreSQL 16 added a DateTimeErrorExtra argument to DecodeDateTime. */
#if PG_VERSION_NUM >= 160000
#define compat_DecodeDateTime(field, ftype, nf, dtype, tm, fsec, tzp) \
	DecodeDateTime(field, ftype, nf, dtype, tm, fsec, tzp, NULL)
#else
#define compat_DecodeDateTime(field, ftype, nf, dtype, tm, fsec, tzp) \
	DecodeDateTime(field, ftype, nf, dtype, tm, fsec, tzp)
#endif

#endif							/* SNOWFLAKE_COMPAT_H */
