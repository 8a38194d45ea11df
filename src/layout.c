/*-------------------------------------------------------------------------
 *
 * layout.c
 *	  The layout of an ID: its settings, their checks, and its arithmetic.
 *
 * Five settings make the layout: snowflake.worker_id, snowflake.id_bits,
 * snowflake.worker_bits, snowflake.sequence_bits and snowflake.epoch.  All
 * are PGC_POSTMASTER.  The epoch is parsed once, when the postmaster loads
 * the library, so that every backend sees the same instant whatever its
 * TimeZone; a backend validates the layout on first use and keeps it.
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
 * The rules a layout must follow are checked in one place, layout_problem(),
 * for two callers:
 *
 *	Server start, and first use.  Settings in postgresql.conf that
 *	PostgreSQL rejects are replaced by their boot values with only a warning
 *	in the log.  snowflake.worker_id boots "unset", which refuses to
 *	generate, so that is safe; but for the epoch or the widths the default
 *	would silently change every ID.  So while postgresql.conf is applied at
 *	server start the check hooks accept whatever the ranges allow, and the
 *	layout is validated as a whole when a backend first uses it (sf_layout,
 *	and for the worker id sf_require_worker_id): generation refuses with an
 *	error naming the settings.
 *
 *	Afterwards (ALTER SYSTEM, a reload, the pg_file_settings view) a value
 *	is checked as part of the layout the next server start would read: the
 *	value itself, and for each of the other four settings its last value
 *	in the configuration files (postgresql.conf with its includes, then
 *	postgresql.auto.conf, which holds what earlier ALTER SYSTEM commands
 *	wrote but a restart has not yet put in force), or its running value
 *	where no file sets it or the file's value is not valid.  Checking
 *	against the running values alone would accept two changes that are each
 *	fine but not together.  Changing two settings that depend on each other
 *	may therefore need a particular order, which the hint names.  ALTER
 *	SYSTEM RESET calls no check hook.
 *
 * Also here: the mapping from instants to timestamp fields that the time
 * helpers share.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "layout.h"
#include "snowflake.h"

/* The settings; see sf_layout_init() */
static int	worker_id_setting = SNOWFLAKE_WORKER_ID_UNSET;
static char *epoch_setting = NULL;
static int	worker_bits_setting = 10;
static int	sequence_bits_setting = 12;
static int	id_bits_setting = SNOWFLAKE_MAX_ID_BITS;

/* Whether _PG_init ran from shared_preload_libraries (sf_layout_init ran). */
static bool preloaded = false;

/*
 * snowflake.epoch as parsed when the library was loaded: in the postmaster,
 * so every backend inherits the same result and none parses it again.  On
 * failure, the problem is kept for sf_layout() to report.
 */
static TimestampTz loaded_epoch;
static const char *loaded_epoch_problem = NULL;

/* The settings that make up a layout, as one server start would read them. */
typedef struct LayoutSettings
{
	int			worker_id;
	int			id_bits;
	int			worker_bits;
	int			sequence_bits;
	const char *epoch;
} LayoutSettings;

/* The rules of a layout, in the order layout_problem() checks them. */
typedef enum LayoutRule
{
	LAYOUT_OK,
	LAYOUT_TIMESTAMP_TOO_NARROW,	/* fewer than 35 timestamp bits */
	LAYOUT_WORKER_TOO_LARGE,	/* the worker id does not fit its bits */
	LAYOUT_LIFETIME_OVER		/* the clock is past the lifetime */
} LayoutRule;

/* The timestamp width these settings leave. */
static int
timestamp_bits(const LayoutSettings *s)
{
	return s->id_bits - s->worker_bits - s->sequence_bits;
}

/*
 * The first rule the layout breaks, with a sentence for an error's detail;
 * LAYOUT_OK if none.  The worker id is checked only when set, and the
 * lifetime only when "now" is given (not 0) and the epoch parses: the
 * generator checks the lifetime against the clock each time it reads it.
 */
static LayoutRule
layout_problem(const LayoutSettings *s, TimestampTz now, char **detail)
{
	int			bits = timestamp_bits(s);
	TimestampTz epoch;
	const char *problem;

	if (bits < SNOWFLAKE_MIN_TIMESTAMP_BITS)
	{
		*detail = psprintf("snowflake.worker_bits = %d and snowflake.sequence_bits = %d would leave %d of the %d bits of snowflake.id_bits for the timestamp; at least %d are needed.",
						   s->worker_bits, s->sequence_bits, bits,
						   s->id_bits, SNOWFLAKE_MIN_TIMESTAMP_BITS);
		return LAYOUT_TIMESTAMP_TOO_NARROW;
	}
	if (s->worker_id != SNOWFLAKE_WORKER_ID_UNSET &&
		s->worker_id >= (1 << s->worker_bits))
	{
		*detail = psprintf("Worker id %d would not fit in %d worker bits, which hold 0 to %d.",
						   s->worker_id, s->worker_bits,
						   (1 << s->worker_bits) - 1);
		return LAYOUT_WORKER_TOO_LARGE;
	}
	if (now != 0 && sf_parse_epoch(s->epoch, &epoch, &problem) &&
		(now - epoch) / 1000 > (INT64CONST(1) << bits) - 1)
	{
		*detail = psprintf("With %d timestamp bits (snowflake.id_bits = %d, snowflake.worker_bits = %d, snowflake.sequence_bits = %d), IDs last %.2f years from the epoch, %s, and that time is over.",
						   bits, s->id_bits, s->worker_bits, s->sequence_bits,
						   (double) (INT64CONST(1) << bits) / (1000.0 * 3600 * 24 * 365.25),
						   s->epoch);
		return LAYOUT_LIFETIME_OVER;
	}
	return LAYOUT_OK;
}

/* The settings in force. */
static void
running_layout(LayoutSettings *s)
{
	s->worker_id = worker_id_setting;
	s->id_bits = id_bits_setting;
	s->worker_bits = worker_bits_setting;
	s->sequence_bits = sequence_bits_setting;
	s->epoch = epoch_setting;
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
 * The layout settings the next server start would read (see the header).
 * The files are parsed quietly: if they cannot be, the running values are
 * used.
 */
static void
read_pending_layout(LayoutSettings *s)
{
	ConfigVariable *head = NULL;
	ConfigVariable *tail = NULL;
	ConfigVariable *item;

	running_layout(s);
	s->epoch = pstrdup(s->epoch);

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
							 SNOWFLAKE_MAX_WORKER_ID, &s->worker_id);
		else if (pg_strcasecmp(item->name, "snowflake.id_bits") == 0)
			take_int_setting(item->value, SNOWFLAKE_MIN_ID_BITS,
							 SNOWFLAKE_MAX_ID_BITS, &s->id_bits);
		else if (pg_strcasecmp(item->name, "snowflake.worker_bits") == 0)
			take_int_setting(item->value, SNOWFLAKE_MIN_WORKER_BITS,
							 SNOWFLAKE_MAX_WORKER_BITS, &s->worker_bits);
		else if (pg_strcasecmp(item->name, "snowflake.sequence_bits") == 0)
			take_int_setting(item->value, SNOWFLAKE_MIN_SEQUENCE_BITS,
							 SNOWFLAKE_MAX_SEQUENCE_BITS, &s->sequence_bits);
		else if (pg_strcasecmp(item->name, "snowflake.epoch") == 0)
			s->epoch = pstrdup(item->value);
	}
	FreeConfigVariables(head);
}

/*
 * The check of one setting: accept anything while the server starts (see
 * the header); afterwards, whether the layout the next start would read,
 * with "pending" holding the new value, can work, saying why not.
 */
static bool
check_pending_layout(LayoutSettings *pending)
{
	char	   *detail;

	if (layout_problem(pending, GetCurrentTimestamp(), &detail) == LAYOUT_OK)
		return true;
	GUC_check_errdetail("%s", detail);
	GUC_check_errhint("The other snowflake settings are taken as the next server start would read them, including values set by ALTER SYSTEM that are not yet in force; change them in an order where each step leaves a working layout.");
	return false;
}

/*
 * The check hooks of the four integer settings differ only in the field the
 * new value goes into.
 */
static bool
check_int_field(size_t field, int newval)
{
	LayoutSettings pending;

	if (process_shared_preload_libraries_in_progress)
		return true;
	read_pending_layout(&pending);
	*(int *) ((char *) &pending + field) = newval;
	return check_pending_layout(&pending);
}

static bool
check_worker_id(int *newval, void **extra, GucSource source)
{
	return check_int_field(offsetof(LayoutSettings, worker_id), *newval);
}

static bool
check_worker_bits(int *newval, void **extra, GucSource source)
{
	return check_int_field(offsetof(LayoutSettings, worker_bits), *newval);
}

static bool
check_sequence_bits(int *newval, void **extra, GucSource source)
{
	return check_int_field(offsetof(LayoutSettings, sequence_bits), *newval);
}

static bool
check_id_bits(int *newval, void **extra, GucSource source)
{
	return check_int_field(offsetof(LayoutSettings, id_bits), *newval);
}

static bool
check_epoch(char **newval, void **extra, GucSource source)
{
	LayoutSettings pending;
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
	read_pending_layout(&pending);
	pending.epoch = *newval;
	return check_pending_layout(&pending);
}

static const char *
show_worker_id(void)
{
	static char buf[16];

	if (worker_id_setting == SNOWFLAKE_WORKER_ID_UNSET)
		return "unset";
	snprintf(buf, sizeof(buf), "%d", worker_id_setting);
	return buf;
}

/*
 * Define the layout settings and read the epoch; called from _PG_init while
 * preloading.
 */
void
sf_layout_init(void)
{
	DefineCustomIntVariable("snowflake.worker_id",
							"Worker id written into every ID this server generates.",
							"Each server must have its own; -1 means unset, and an unset worker id refuses to generate.",
							&worker_id_setting,
							SNOWFLAKE_WORKER_ID_UNSET,
							SNOWFLAKE_WORKER_ID_UNSET, SNOWFLAKE_MAX_WORKER_ID,
							PGC_POSTMASTER,
							0,
							check_worker_id, NULL, show_worker_id);

	DefineCustomStringVariable("snowflake.epoch",
							   "The instant that timestamp 0 of an ID stands for.",
							   "A timestamp with time zone in the past, in whole milliseconds.",
							   &epoch_setting,
							   "2025-01-01 00:00:00+00",
							   PGC_POSTMASTER,
							   0,
							   check_epoch, NULL, NULL);

	DefineCustomIntVariable("snowflake.worker_bits",
							"Number of bits of an ID that hold the worker id.",
							"The timestamp gets id_bits - worker_bits - sequence_bits bits, which must be at least 35.",
							&worker_bits_setting,
							10,
							SNOWFLAKE_MIN_WORKER_BITS, SNOWFLAKE_MAX_WORKER_BITS,
							PGC_POSTMASTER,
							0,
							check_worker_bits, NULL, NULL);

	DefineCustomIntVariable("snowflake.sequence_bits",
							"Number of bits of an ID that count IDs within one millisecond.",
							"The timestamp gets id_bits - worker_bits - sequence_bits bits, which must be at least 35.",
							&sequence_bits_setting,
							12,
							SNOWFLAKE_MIN_SEQUENCE_BITS, SNOWFLAKE_MAX_SEQUENCE_BITS,
							PGC_POSTMASTER,
							0,
							check_sequence_bits, NULL, NULL);

	DefineCustomIntVariable("snowflake.id_bits",
							"Number of bits an ID may use, counted from the lowest.",
							"63 allows any positive bigint; 53 keeps every ID below 2^53, exact as a JavaScript number, for the layout's whole lifetime. The timestamp gets id_bits - worker_bits - sequence_bits bits.",
							&id_bits_setting,
							SNOWFLAKE_MAX_ID_BITS,
							SNOWFLAKE_MIN_ID_BITS, SNOWFLAKE_MAX_ID_BITS,
							PGC_POSTMASTER,
							0,
							check_id_bits, NULL, NULL);

	if (sf_parse_epoch(epoch_setting, &loaded_epoch, &loaded_epoch_problem))
		loaded_epoch_problem = NULL;
	preloaded = true;
}

/*
 * Refuse politely when the library was not preloaded: without it there are
 * no settings and no shared generator.
 */
void
sf_require_preload(void)
{
	if (!preloaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake must be loaded via shared_preload_libraries"),
				 errdetail("The generator and its settings live in shared memory, which is set up only when the server starts."),
				 errhint("Add snowflake to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/*
 * The configured worker id (SNOWFLAKE_WORKER_ID_UNSET if unset), unchecked:
 * for the generator's shared state, which the postmaster sets up.
 */
int
sf_configured_worker_id(void)
{
	return worker_id_setting;
}

/*
 * The server's layout, validated.  Raises an error if the library was not
 * preloaded or the settings cannot describe a usable layout.  The worker id
 * is not part of that check (reading IDs needs none): sf_require_worker_id
 * checks it for the generator.
 */
const SnowflakeLayout *
sf_layout(void)
{
	static SnowflakeLayout layout;
	static bool valid = false;
	LayoutSettings s;
	char	   *detail;

	if (valid)
		return &layout;

	sf_require_preload();

	/*
	 * The check hook lets an invalid epoch in postgresql.conf through at
	 * server start, so that it lands here rather than being silently replaced
	 * by the default.
	 */
	if (loaded_epoch_problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("invalid value for snowflake.epoch: \"%s\"",
						epoch_setting),
				 errdetail("%s", loaded_epoch_problem),
				 errhint("Fix snowflake.epoch in postgresql.conf and restart the server.")));

	running_layout(&s);
	s.worker_id = SNOWFLAKE_WORKER_ID_UNSET;
	if (layout_problem(&s, 0, &detail) == LAYOUT_TIMESTAMP_TOO_NARROW)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("snowflake layout leaves too few bits for the timestamp"),
				 errdetail("%s", detail),
				 errhint("Lower snowflake.worker_bits or snowflake.sequence_bits, or raise snowflake.id_bits, in postgresql.conf and restart the server.")));

	layout.id_bits = s.id_bits;
	layout.timestamp_bits = timestamp_bits(&s);
	layout.worker_bits = s.worker_bits;
	layout.sequence_bits = s.sequence_bits;
	layout.epoch = loaded_epoch;
	layout.max_timestamp = (INT64CONST(1) << layout.timestamp_bits) - 1;
	layout.max_worker = (INT64CONST(1) << s.worker_bits) - 1;
	layout.max_sequence = (INT64CONST(1) << s.sequence_bits) - 1;
	layout.max_id = (int64) ((UINT64CONST(1) << s.id_bits) - 1);
	layout.worker_id = worker_id_setting;
	valid = true;
	return &layout;
}

/*
 * An error if the configured worker id is unset or does not fit the layout.
 * Every generating call checks it, so the common case is one comparison;
 * layout_problem() is asked only to word the refusal.
 */
void
sf_require_worker_id(const SnowflakeLayout *layout)
{
	LayoutSettings s;
	char	   *detail;

	if (layout->worker_id == SNOWFLAKE_WORKER_ID_UNSET)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake.worker_id is not set"),
				 errdetail("Each server that generates IDs needs a worker id of its own; an invalid value in postgresql.conf is ignored with a warning in the server log."),
				 errhint("Set snowflake.worker_id to a number from 0 to " INT64_FORMAT " that no other server uses, in postgresql.conf, and restart the server.",
						 layout->max_worker)));
	if (layout->worker_id <= layout->max_worker)
		return;

	running_layout(&s);
	if (layout_problem(&s, 0, &detail) == LAYOUT_WORKER_TOO_LARGE)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("snowflake.worker_id %d does not fit in snowflake.worker_bits = %d",
						layout->worker_id, layout->worker_bits),
				 errdetail("%s", detail),
				 errhint("Change snowflake.worker_id or snowflake.worker_bits in postgresql.conf and restart the server.")));
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
static void
check_id_fits(const SnowflakeLayout *layout, int64 id)
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
 * The parts of an ID from the user, under the server's layout, which it
 * returns; an error if the ID is negative or the layout could never have
 * issued it.
 */
const SnowflakeLayout *
sf_decode_id(int64 id, int64 *timestamp, int64 *worker, int64 *sequence)
{
	const SnowflakeLayout *layout;

	sf_check_id(id);
	layout = sf_layout();
	check_id_fits(layout, id);
	sf_decompose(layout, id, timestamp, worker, sequence);
	return layout;
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
