/*-------------------------------------------------------------------------
 *
 * epoch.c
 *	  Reading snowflake.epoch: ISO 8601, the same instant everywhere.
 *
 * The epoch must stand for the same instant in every session, on every day
 * and on every server, so it is read without DateStyle, TimeZone or
 * timezone_abbreviations, which PostgreSQL's own date input depends on:
 * "01/02/2025" is in February under DMY and in January under MDY, and "IST"
 * is +02 or +05:30 depending on the abbreviation set.  One form is
 * accepted, ISO 8601:
 *
 *		YYYY-MM-DD HH:MM:SS[.fff]		(or a T between date and time)
 *
 * followed, after optional spaces, by an optional zone: a numeric UTC offset
 * (+HH, +HH:MM or +HHMM, or with a minus), Z, UTC, or a zone name of the
 * time zone database, which has the form Area/Location (Europe/Paris).
 * Without a zone the time is UTC.  Abbreviations are refused, and so is a
 * local time that a daylight-saving change makes occur twice or never.  The
 * parser never throws: it is used both where the postmaster reads the epoch
 * and by the check hook of ALTER SYSTEM (layout.c), so both give the same
 * answer.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "pgtime.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

#include "layout.h"

#define EPOCH_FORM_PROBLEM \
	"Write it in ISO 8601 as YYYY-MM-DD HH:MM:SS, with optional fractional seconds and a T or a space between date and time, followed by a UTC offset (+00, +05:30, -0800), Z, or a time zone name such as Europe/Paris; a time without a zone is read as UTC."
#define EPOCH_ZONE_PROBLEM \
	"Time zone abbreviations are not accepted, because their meaning depends on timezone_abbreviations; write a UTC offset (+05:30), Z, or a time zone name such as Asia/Kolkata."

/* Read exactly n decimal digits at *p into *value, and move past them. */
static bool
read_digits(const char **p, int n, int *value)
{
	int			i;

	*value = 0;
	for (i = 0; i < n; i++)
	{
		if (!isdigit((unsigned char) (*p)[i]))
			return false;
		*value = *value * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return true;
}

/* Whether only spaces are left at p. */
static bool
at_end(const char *p)
{
	while (*p == ' ')
		p++;
	return *p == '\0';
}

/*
 * Read "YYYY-MM-DD HH:MM:SS[.fff]" at *p into *tm and *fsec (microseconds,
 * a whole number of milliseconds), and move past it.  On failure, returns a
 * sentence for errdetail; NULL on success.
 */
static const char *
read_iso_datetime(const char **p, struct pg_tm *tm, fsec_t *fsec)
{
	const char *s = *p;
	int			digits = 0;

	memset(tm, 0, sizeof(*tm));
	*fsec = 0;
	if (!read_digits(&s, 4, &tm->tm_year) || *s++ != '-' ||
		!read_digits(&s, 2, &tm->tm_mon) || *s++ != '-' ||
		!read_digits(&s, 2, &tm->tm_mday))
		return EPOCH_FORM_PROBLEM;
	if (*s != ' ' && *s != 'T' && *s != 't')
		return EPOCH_FORM_PROBLEM;
	s++;
	if (!read_digits(&s, 2, &tm->tm_hour) || *s++ != ':' ||
		!read_digits(&s, 2, &tm->tm_min) || *s++ != ':' ||
		!read_digits(&s, 2, &tm->tm_sec))
		return EPOCH_FORM_PROBLEM;

	if (*s == '.')
	{
		for (s++; isdigit((unsigned char) *s); s++, digits++)
		{
			if (digits < 3)
				*fsec = *fsec * 10 + (*s - '0');
			else if (*s != '0')
				return "The epoch must be a whole number of milliseconds.";
		}
		if (digits == 0)
			return EPOCH_FORM_PROBLEM;
		for (; digits < 3; digits++)
			*fsec *= 10;
		*fsec *= 1000;
	}

	if (tm->tm_year < 1 || tm->tm_mon < 1 || tm->tm_mon > MONTHS_PER_YEAR ||
		tm->tm_mday < 1 ||
		tm->tm_mday > day_tab[isleap(tm->tm_year)][tm->tm_mon - 1] ||
		tm->tm_hour > 23 || tm->tm_min > 59 || tm->tm_sec > 59)
		return "The year, month, day, hour, minute or second is out of range.";

	*p = s;
	return NULL;
}

/*
 * Read a numeric UTC offset at p ("+HH", "+HH:MM", "+HHMM" or with a minus)
 * into *tz, in PostgreSQL's sign convention (seconds west of Greenwich).
 */
static bool
read_utc_offset(const char *p, int *tz)
{
	int			sign = (*p == '-') ? 1 : -1;
	int			hours;
	int			minutes = 0;

	p++;
	if (!read_digits(&p, 2, &hours))
		return false;
	if (*p == ':')
	{
		p++;
		if (!read_digits(&p, 2, &minutes))
			return false;
	}
	else if (isdigit((unsigned char) *p) && !read_digits(&p, 2, &minutes))
		return false;
	if (hours > MAX_TZDISP_HOUR || minutes >= MINS_PER_HOUR || !at_end(p))
		return false;
	*tz = sign * (hours * SECS_PER_HOUR + minutes * SECS_PER_MINUTE);
	return true;
}

/*
 * Whether the instant "utc" reads as the local time "local" in zone.
 */
static bool
reads_as(TimestampTz utc, Timestamp local, pg_tz *zone)
{
	struct pg_tm tm;
	fsec_t		fsec;
	int			tz;
	Timestamp	back;

	return timestamp2tm(utc, &tz, &tm, &fsec, NULL, zone) == 0 &&
		tm2timestamp(&tm, fsec, NULL, &back) == 0 &&
		back == local;
}

/*
 * The offset of local time *tm in zone, into *tz, or false if that local
 * time occurs twice (the clocks were set back) or never (set forward).
 * Offsets change at most once within a day or so, so the zone's offsets a
 * day before and a day after are the only candidates.
 */
static bool
zone_offset(struct pg_tm *tm, pg_tz *zone, int *tz)
{
	Timestamp	local;
	int			found = 0;
	int			i;

	if (tm2timestamp(tm, 0, NULL, &local) != 0)
		return false;
	for (i = -1; i <= 1; i += 2)
	{
		struct pg_tm probe_tm;
		fsec_t		fsec;
		int			offset;

		if (timestamp2tm(local + i * USECS_PER_DAY, &offset, &probe_tm,
						 &fsec, NULL, zone) != 0)
			return false;
		/* in PostgreSQL's sign convention, seconds west of Greenwich */
		if (reads_as(local + offset * USECS_PER_SEC, local, zone) &&
			(found == 0 || offset != *tz))
		{
			*tz = offset;
			found++;
		}
	}
	return found == 1;
}

/*
 * The offset of a time zone name at p (ended by spaces or the end) for the
 * local time *tm, into *tz.  Only names of the form Area/Location, and UTC,
 * are taken: a word alone is most likely an abbreviation.  On failure,
 * returns a sentence for errdetail; NULL on success.
 */
static const char *
read_zone_name(const char *p, struct pg_tm *tm, int *tz)
{
	char		name[TZ_STRLEN_MAX + 1];
	int			len = 0;
	bool		has_slash = false;
	pg_tz	   *zone;

	while (p[len] != '\0' && p[len] != ' ')
	{
		if (len >= TZ_STRLEN_MAX ||
			!(isalnum((unsigned char) p[len]) || strchr("/_+-", p[len])))
			return EPOCH_FORM_PROBLEM;
		has_slash |= (p[len] == '/');
		name[len] = p[len];
		len++;
	}
	name[len] = '\0';
	if (!at_end(p + len))
		return EPOCH_FORM_PROBLEM;

	if (pg_strcasecmp(name, "UTC") == 0)
	{
		*tz = 0;
		return NULL;
	}
	if (!has_slash || !isalpha((unsigned char) name[0]))
		return EPOCH_ZONE_PROBLEM;
	zone = pg_tzset(name);
	if (zone == NULL)
		return "The time zone name is not in the time zone database; write a UTC offset (+05:30), Z, or a name such as Europe/Paris.";
	if (!zone_offset(tm, zone, tz))
		return "That local time occurs twice, or not at all, in this time zone, because its clocks were changed then; write it with a UTC offset.";
	return NULL;
}

/*
 * Parse an epoch string (in the form above) without throwing, so that GUC
 * check hooks can use it.  On failure, sets *problem to a sentence for
 * errdetail and returns false.
 */
bool
sf_parse_epoch(const char *str, TimestampTz *result,
			   const char **problem)
{
	const char *p = str;
	struct pg_tm tm;
	fsec_t		fsec;
	int			tz = 0;

	while (*p == ' ')
		p++;
	*problem = read_iso_datetime(&p, &tm, &fsec);
	if (*problem != NULL)
		return false;

	while (*p == ' ')
		p++;
	if (*p == '+' || *p == '-')
	{
		if (!read_utc_offset(p, &tz))
			*problem = EPOCH_FORM_PROBLEM;
	}
	else if ((*p == 'Z' || *p == 'z') && at_end(p + 1))
		tz = 0;
	else if (*p != '\0')
		*problem = read_zone_name(p, &tm, &tz);
	if (*problem != NULL)
		return false;

	if (tm2timestamp(&tm, fsec, &tz, result) != 0 || !IS_VALID_TIMESTAMP(*result))
	{
		*problem = "It is outside the range of timestamp with time zone.";
		return false;
	}
	return true;
}
