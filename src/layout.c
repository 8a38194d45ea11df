/*-------------------------------------------------------------------------
 *
 * layout.c
 *	  The bit layout of an ID and its epoch: validation and encoding.
 *
 * The layout settings are PGC_POSTMASTER.  The epoch is parsed once, when
 * the postmaster loads the library, so that every backend sees the same
 * instant whatever its TimeZone; a backend validates the layout on first use
 * and keeps the result.  Validation here covers what does not depend on the
 * clock (the epoch parses, the timestamp field is wide enough); whether the
 * clock lies inside the layout's lifetime is checked by the generator each
 * time it reads the clock.
 *
 * Ranges, and why:
 *	id_bits			36..63	63 keeps IDs positive bigints; 53 keeps them
 *							below 2^53, exact as JavaScript numbers, for the
 *							layout's whole lifetime
 *	worker_bits		0..20	0 means a single server; 20 allows a million
 *	sequence_bits	1..22	at least one ID per millisecond
 *	timestamp bits	>= 35	what is left of id_bits; 35 bits of milliseconds
 *							last about 1.09 years, 41 bits (the default)
 *							about 69.7 years
 *
 * Also here: the mapping from instants to timestamp fields that the time
 * helpers share.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "miscadmin.h"
#include "pgtime.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

#include "snowflake.h"

/*
 * Parsing the epoch
 * -----------------
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
 * parser is used both where the postmaster reads the epoch and by the check
 * hook of ALTER SYSTEM, so both give the same answer.
 */
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

/*
 * snowflake.epoch as parsed when the library was loaded: in the postmaster,
 * so every backend inherits the same result and none parses it again.
 */
static TimestampTz loaded_epoch;
static const char *loaded_epoch_problem = NULL;

void
sf_load_epoch(void)
{
	/* on failure, the problem is kept for sf_layout() to report */
	if (sf_parse_epoch(snowflake_epoch, &loaded_epoch,
					   &loaded_epoch_problem))
		loaded_epoch_problem = NULL;
}

/*
 * The server's layout, validated.  Raises an error if the library was not
 * preloaded or the settings cannot describe a usable layout.
 */
const SnowflakeLayout *
sf_layout(void)
{
	static SnowflakeLayout layout;
	static bool valid = false;
	int			timestamp_bits;

	if (valid)
		return &layout;

	sf_require_preload();

	/*
	 * The check hook lets an invalid epoch in postgresql.conf through at
	 * server start (see snowflake.c), so that it lands here rather than being
	 * silently replaced by the default.
	 */
	if (loaded_epoch_problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("invalid value for snowflake.epoch: \"%s\"",
						snowflake_epoch),
				 errdetail("%s", loaded_epoch_problem),
				 errhint("Fix snowflake.epoch in postgresql.conf and restart the server.")));

	timestamp_bits = snowflake_id_bits - snowflake_worker_bits - snowflake_sequence_bits;
	if (timestamp_bits < SNOWFLAKE_MIN_TIMESTAMP_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("snowflake layout leaves too few bits for the timestamp"),
				 errdetail("snowflake.worker_bits = %d and snowflake.sequence_bits = %d leave %d of the %d bits of snowflake.id_bits for the timestamp; at least %d are needed.",
						   snowflake_worker_bits, snowflake_sequence_bits,
						   timestamp_bits, snowflake_id_bits,
						   SNOWFLAKE_MIN_TIMESTAMP_BITS),
				 errhint("Lower snowflake.worker_bits or snowflake.sequence_bits, or raise snowflake.id_bits, in postgresql.conf and restart the server.")));

	layout.id_bits = snowflake_id_bits;
	layout.timestamp_bits = timestamp_bits;
	layout.worker_bits = snowflake_worker_bits;
	layout.sequence_bits = snowflake_sequence_bits;
	layout.epoch = loaded_epoch;
	layout.max_timestamp = (INT64CONST(1) << timestamp_bits) - 1;
	layout.max_worker = (INT64CONST(1) << snowflake_worker_bits) - 1;
	layout.max_sequence = (INT64CONST(1) << snowflake_sequence_bits) - 1;
	layout.max_id = (int64) ((UINT64CONST(1) << snowflake_id_bits) - 1);
	valid = true;
	return &layout;
}

/*
 * The wall clock in milliseconds since the epoch, rounded down; negative
 * before the epoch.  Called with the generator's lock held: it must stay a
 * plain clock read.
 */
int64
sf_clock_ms(const SnowflakeLayout *layout)
{
	int64		us = GetCurrentTimestamp() - layout->epoch;

	return us >= 0 ? us / 1000 : -((-us + 999) / 1000);
}

int64
sf_compose(const SnowflakeLayout *layout, int64 timestamp,
		   int64 worker, int64 sequence)
{
	Assert(timestamp >= 0 && timestamp <= layout->max_timestamp);
	Assert(worker >= 0 && worker <= layout->max_worker);
	Assert(sequence >= 0 && sequence <= layout->max_sequence);

	return (timestamp << (layout->worker_bits + layout->sequence_bits)) |
		(worker << layout->sequence_bits) |
		sequence;
}

void
sf_decompose(const SnowflakeLayout *layout, int64 id,
			 int64 *timestamp, int64 *worker, int64 *sequence)
{
	Assert(id >= 0);

	*timestamp = id >> (layout->worker_bits + layout->sequence_bits);
	*worker = (id >> layout->sequence_bits) & layout->max_worker;
	*sequence = id & layout->max_sequence;
}

/*
 * Microseconds to milliseconds, rounded down (towards minus infinity).
 */
static int64
floor_ms(TimestampTz us)
{
	return us / 1000 - (us % 1000 < 0 ? 1 : 0);
}

/*
 * An ID from the user, or an error if it is negative: snowflake never
 * issues one, and decoding one would give nonsense.
 */
int64
sf_check_id(int64 id)
{
	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowflake ID must not be negative"),
				 errdetail("Got " INT64_FORMAT "; snowflake IDs keep bit 63 clear, so they are never negative.", id),
				 errhint("Pass an ID made by snowflake_nextval() under this server's layout.")));
	return id;
}

/*
 * Refuse an ID the layout could never issue: with snowflake.id_bits below
 * 63, a number at or above 2^id_bits would decode to a time past the
 * layout's lifetime.  (Under 63 bits every non-negative bigint fits.)
 */
void
sf_check_id_fits(const SnowflakeLayout *layout, int64 id)
{
	if (id > layout->max_id)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("snowflake ID " INT64_FORMAT " is out of range for the snowflake layout", id),
				 errdetail("With snowflake.id_bits = %d, every ID is at most " INT64_FORMAT ".",
						   layout->id_bits, layout->max_id),
				 errhint("A larger number comes from another layout, or was rounded on its way (JavaScript numbers hold integers exactly only up to 2^53 - 1).")));
}

/*
 * Whether timestamptz can hold the instant a timestamp field stands for:
 * wide layouts can hold timestamps beyond PostgreSQL's range.
 */
bool
sf_timestamp_fits(const SnowflakeLayout *layout, int64 timestamp)
{
	/* in milliseconds: END_TIMESTAMP - epoch overflows for early epochs */
	return timestamp <= floor_ms(END_TIMESTAMP - 1) - layout->epoch / 1000;
}

/*
 * The instant a timestamp field stands for, or an error if timestamptz
 * cannot hold it.
 */
TimestampTz
sf_timestamp_to_timestamptz(const SnowflakeLayout *layout,
							int64 timestamp)
{
	Assert(timestamp >= 0);

	if (!sf_timestamp_fits(layout, timestamp))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("snowflake timestamp " INT64_FORMAT " is out of range for timestamp with time zone",
						timestamp),
				 errdetail("It lies beyond the last instant PostgreSQL can represent.")));

	return layout->epoch + timestamp * 1000;
}

/*
 * The timestamp field for a finite instant: milliseconds since the epoch,
 * rounded down, the way the generator reads the clock.  No range check:
 * the result is negative before the epoch and may pass max_timestamp.
 * *exact tells whether the instant falls on a millisecond boundary.
 *
 * The epoch is a whole number of milliseconds, so rounding the instant
 * alone gives the same result as rounding the difference, and no
 * subtraction of two large timestamps can overflow.
 */
int64
sf_ms_since_epoch(const SnowflakeLayout *layout, TimestampTz ts,
				  bool *exact)
{
	Assert(!TIMESTAMP_NOT_FINITE(ts));
	Assert(layout->epoch % 1000 == 0);

	*exact = (ts % 1000 == 0);
	return floor_ms(ts) - layout->epoch / 1000;
}

/*
 * The last millisecond of the layout's lifetime that PostgreSQL can
 * represent: the one max_timestamp stands for, or, for layouts that outlive
 * timestamp with time zone, the last whole millisecond of its range.
 */
TimestampTz
sf_lifetime_end(const SnowflakeLayout *layout)
{
	int64		last = floor_ms(END_TIMESTAMP - 1) - layout->epoch / 1000;

	if (last > layout->max_timestamp)
		last = layout->max_timestamp;
	return layout->epoch + last * 1000;
}

/*
 * The timestamp field for an instant, or an error if the instant lies
 * outside the layout's lifetime (infinity always does).  Instants inside a
 * millisecond are rounded down to it.
 */
int64
sf_timestamptz_to_timestamp(const SnowflakeLayout *layout,
							TimestampTz ts)
{
	int64		ms = -1;
	bool		exact;

	if (!TIMESTAMP_NOT_FINITE(ts))
		ms = sf_ms_since_epoch(layout, ts, &exact);

	if (ms < 0 || ms > layout->max_timestamp)
	{
		/* timestamptz_to_str() returns a static buffer: copy each result */
		char	   *given = pstrdup(timestamptz_to_str(ts));
		char	   *first = pstrdup(timestamptz_to_str(layout->epoch));
		char	   *last = pstrdup(timestamptz_to_str(sf_lifetime_end(layout)));

		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp %s is outside the lifetime of snowflake IDs",
						given),
				 errdetail("With %d timestamp bits and snowflake.epoch %s, IDs carry times from the epoch through the millisecond starting at %s.",
						   layout->timestamp_bits, first, last)));
	}
	return ms;
}
