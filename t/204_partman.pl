# Copyright (c) 2026, snowflake contributors

# pg_partman keeps daily partitions of a table keyed by snowflake_nextval(),
# through its native integer (id) partitioning, as docs/time.md describes.
# A day of IDs is 86,400,000 << (worker_bits + sequence_bits) wide, and the
# default epoch is a UTC midnight, so every partition bound is the first ID
# of a UTC day.
#
# The days pass on the server's clock (libfaketime), and the server issues
# every ID itself: pg_partman makes partitions ahead of the largest ID in
# the table, so only IDs the generator really issued on each day test what
# its maintenance does in production.  (IDs composed for later days would
# move that largest ID, and with it the premade partitions, by hand.)
#
# The server's clock is pinned to known instants, whenever the test runs:
# day 0 is 2028-02-27 (UTC), so that the days cross a leap day and a month
# end, and each day's rows are issued at 09:00 and at 15:00, so that a
# range starting at noon splits a day's rows in two.
#
# Each simulated day: insert rows, run pg_partman's maintenance (what its
# background worker or a cron job does).  Checked: the bounds are UTC
# midnights a day apart; each day's rows are in that day's partition and
# none in the default one; maintenance keeps partitions ahead; retention
# drops whole days; id <@ tstzrange(...) scans only the partitions of its
# days.
#
# pg_partman 4 (Debian's postgresql-15-partman) and 5 (17, 18) differ in
# create_parent: 4 needs p_type => 'native', 5 partitions natively only and
# takes p_type => 'range' by default.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use Time::Local qw(timegm);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

need_libfaketime();

my $node = snowflake_node('partman', worker_id => 1);
my $sharedir = $node->config_data('--sharedir');
need_package('postgresql-@PG@-partman', -e "$sharedir/extension/pg_partman.control",
	'pg_partman is not installed');

# Day $n of the test at $hour:00 UTC, in seconds since 1970.
sub instant
{
	my ($n, $hour) = @_;
	return timegm(0, 0, 0, 27, 1, 2028) + $n * 86400 + $hour * 3600;
}

start_with_fake_clock($node, fake_clock_offset_to(instant(0, 9)));
$node->safe_psql(
	'postgres', q{
	CREATE EXTENSION snowflake;
	CREATE SCHEMA partman;
	CREATE EXTENSION pg_partman SCHEMA partman;
	CREATE TABLE events (
		id      bigint NOT NULL DEFAULT snowflake_nextval(),
		day     integer NOT NULL,
		hour    integer NOT NULL,
		payload text,
		PRIMARY KEY (id)
	) PARTITION BY RANGE (id);
});
my $partman_major = $node->safe_psql('postgres',
	"SELECT split_part(extversion, '.', 1) FROM pg_extension WHERE extname = 'pg_partman'");
note "pg_partman major version $partman_major";

# The recipe of docs/time.md: partitions one day of IDs wide, starting at
# today's first ID, three days premade.
my $type = $partman_major >= 5 ? '' : "p_type => 'native',";
$node->safe_psql(
	'postgres', qq{
	SELECT partman.create_parent(
		p_parent_table => 'public.events',
		p_control => 'id',
		$type
		p_interval => (86400000::bigint << (worker_bits + sequence_bits))::text,
		p_premake => 3,
		p_start_partition => snowflake_min_id(date_trunc('day', now(), 'UTC'))::text)
	  FROM snowflake_stats;
});

# The day that is "today" on the server at the start, as a timestamptz
# (UTC midnight); day n of the test is n days later.
my $day0 = $node->safe_psql('postgres', "SELECT date_trunc('day', now(), 'UTC')");
is($day0, '2028-02-27 00:00:00+00', "the server's clock is pinned to day 0");

# The partitions (not the default one) with their bounds as IDs and as
# instants, in order.
my $partitions = q{
	SELECT c.relname,
	       b[1]::bigint AS lo, b[2]::bigint AS hi,
	       snowflake_to_timestamptz(b[1]::bigint) AS lo_at,
	       snowflake_to_timestamptz(b[2]::bigint) AS hi_at
	  FROM pg_inherits i
	  JOIN pg_class c ON c.oid = i.inhrelid,
	       regexp_match(pg_get_expr(c.relpartbound, c.oid),
	                    '^FOR VALUES FROM \(''(\d+)''\) TO \(''(\d+)''\)$') AS b
	 WHERE i.inhparent = 'events'::regclass AND b IS NOT NULL};

# days n .. m-1 are the partitions, as day numbers from day 0
sub partition_days
{
	return $node->safe_psql(
		'postgres', qq{
		SELECT string_agg(extract(day FROM p.lo_at - '$day0'::timestamptz)::text, ','
		                  ORDER BY p.lo)
		  FROM ($partitions) p});
}

is( $node->safe_psql(
		'postgres', qq{
		SELECT count(*),
		       bool_and(lo_at = date_trunc('day', lo_at, 'UTC')),
		       bool_and(hi_at = lo_at + interval '1 day'),
		       bool_and(snowflake_to_timestamptz(hi - 1) = hi_at - interval '1 millisecond'),
		       bool_and(lo = snowflake_min_id(lo_at) AND hi - 1 = snowflake_max_id(hi_at - interval '1 millisecond'))
		  FROM ($partitions) p}),
	'4|t|t|t|t',
	'create_parent: four partitions, each from the first ID of a UTC day to the first of the next');
is(partition_days(), '0,1,2,3', 'create_parent: today and the three days after it');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass AND pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT'"
	),
	'1',
	'... and a default partition');

# Five days: rows issued on each day, 50 at 09:00 and 50 at 15:00,
# maintenance after them.
for my $n (0 .. 4)
{
	for my $hour (9, 15)
	{
		set_fake_clock($node, fake_clock_offset_to(instant($n, $hour)));
		$node->safe_psql('postgres',
			"INSERT INTO events (day, hour, payload) SELECT $n, $hour, 'row ' || g FROM generate_series(1, 50) g"
		);
	}
	$node->safe_psql('postgres',
		"SELECT partman.run_maintenance(p_parent_table => 'public.events')");
	is( $node->safe_psql(
			'postgres', qq{
			SELECT count(*),
			       bool_and(date_trunc('hour', snowflake_to_timestamptz(id), 'UTC')
			                = '$day0'::timestamptz + make_interval(days => $n, hours => hour))
			  FROM events WHERE day = $n}),
		'100|t',
		"day $n: the IDs issued today carry today's date and the hour they were issued");
	is(partition_days(), join(',', 0 .. $n + 3),
		"day $n: after maintenance the partitions reach three days ahead");
}

is( $node->safe_psql(
		'postgres', qq{
		SELECT string_agg(format('%s:%s', e.day, p.lo_day), ',' ORDER BY e.day)
		  FROM (SELECT tableoid, day, count(*) FROM events GROUP BY 1, 2) e
		  LEFT JOIN (SELECT relname,
		                    extract(day FROM lo_at - '$day0'::timestamptz) AS lo_day
		               FROM ($partitions) x) p ON p.relname = e.tableoid::regclass::text}),
	'0:0,1:1,2:2,3:3,4:4',
	'every row is in the partition of the day its ID was issued');
is($node->safe_psql('postgres', 'SELECT count(*) FROM events_default'),
	'0', 'no row fell into the default partition');

# The partitions a plan scans, each once.
sub scanned
{
	my ($plan) = @_;
	my %seen = map { $_ => 1 } $plan =~ /\bon (events_(?:p\d+|default))\b/g;
	return join ' ', sort keys %seen;
}

# Queries by time touch only the partitions of their days: a constant
# range is pruned while planning.
my ($from, $to) = split /\|/,
  $node->safe_psql('postgres',
	"SELECT '$day0'::timestamptz + interval '1 day 12 hours', '$day0'::timestamptz + interval '3 days'"
  );
my $explain = $node->safe_psql(
	'postgres', qq{
	EXPLAIN (COSTS OFF)
	SELECT * FROM events WHERE id <@ tstzrange('$from', '$to')});
note $explain;
unlike($explain, qr/Subplans Removed/, 'id <@ a constant range: pruned while planning');
my $expected = join ' ', split /\n/,
  $node->safe_psql(
	'postgres', qq{
	SELECT relname FROM ($partitions) p
	 WHERE lo_at IN ('$day0'::timestamptz + interval '1 day',
	                 '$day0'::timestamptz + interval '2 days')
	 ORDER BY relname});
is(scanned($explain), $expected,
	'id <@ [day 1 noon, day 3): only the partitions of days 1 and 2 are scanned');
is( $node->safe_psql(
		'postgres', qq{
		SELECT string_agg(format('%s@%s:%s', day, hour, n), ',' ORDER BY day, hour)
		  FROM (SELECT day, hour, count(*) AS n
		          FROM events
		         WHERE id <@ tstzrange('$from', '$to')
		         GROUP BY day, hour) r}),
	'1@15:50,2@9:50,2@15:50',
	'... and they hold exactly the rows of those days that match: day 1 from noon, all of day 2');

# A range computed at run time is pruned when the executor starts.
$explain = $node->safe_psql(
	'postgres', qq{
	EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
	SELECT * FROM events
	 WHERE id <@ tstzrange(now() - interval '1 day', NULL)});
note $explain;
like($explain, qr/Subplans Removed: [1-9]/,
	'id <@ tstzrange(now() - 1 day, NULL): the older partitions are pruned at run time');
is( scanned($explain),
	join(' ', 'events_default', split /\n/,
		$node->safe_psql(
			'postgres', qq{
			SELECT relname FROM ($partitions) p
			 WHERE lo_at >= '$day0'::timestamptz + interval '3 days' ORDER BY relname})),
	'... leaving day 3, today (day 4), the three premade days and the default partition');

# Retention: keep two days of IDs.  Maintenance drops the partitions whose
# every ID is older than that, counted back from the largest ID: whole days.
$node->safe_psql(
	'postgres', q{
	UPDATE partman.part_config
	   SET retention = ((2 * 86400000)::bigint << (worker_bits + sequence_bits))::text,
	       retention_keep_table = false
	  FROM snowflake_stats
	 WHERE parent_table = 'public.events';
	SELECT partman.run_maintenance(p_parent_table => 'public.events');
});
is(partition_days(), '2,3,4,5,6,7',
	'retention of two days: the partitions of days 0 and 1 are dropped');
is( $node->safe_psql(
		'postgres',
		'SELECT string_agg(format(\'%s:%s\', day, n), \',\' ORDER BY day) FROM (SELECT day, count(*) AS n FROM events GROUP BY day) d'
	),
	'2:100,3:100,4:100',
	'... with all their rows, and nothing of the days kept');

$node->stop;
done_testing();
