
# Copyright (c) 2026, snowflake contributors

# a) A layout with one sequence bit (two IDs per millisecond) under load from
#    several sessions: the generator must borrow future milliseconds, never
#    run more than snowflake.max_drift ahead of the clock, make callers wait
#    rather than fail, and keep every ID distinct and each session's IDs
#    increasing.
# b) A non-default layout and epoch: IDs decompose into the configured
#    fields, and recomposing them by hand in SQL gives the same bigint.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $max_drift = 200;

my $node = snowflake_node('layout', worker_id => 3);
set_snowflake_conf(
	$node,
	'snowflake.sequence_bits' => 1,
	'snowflake.max_drift' => $max_drift,
	'snowflake.max_wait' => 1000);
$node->start;

#
# a) Overflowing every millisecond.
#
# Each row records a clock reading taken before the call and one taken after
# it.  OFFSET 0 subqueries (see timed_ids_sql in SnowflakeTest.pm) make the
# three happen in that order, and the test checks before <= after to be sure.
#
# The generator reads the clock once per ID (call it t, in whole ms since the
# epoch, rounded down) and issues a timestamp ts with t <= ts <= t +
# max_drift.  Since before <= t <= after in real time and the epoch is a
# whole millisecond, created_at >= date_trunc('milliseconds', before) and
# created_at <= after + max_drift, with no further allowance needed.
$node->safe_psql(
	'postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE ids (
		ord bigserial,
		backend int NOT NULL DEFAULT pg_backend_pid(),
		before timestamptz NOT NULL,
		id bigint PRIMARY KEY,
		after timestamptz NOT NULL
	);
	CREATE TABLE single (
		n int NOT NULL,
		before timestamptz NOT NULL,
		id bigint PRIMARY KEY,
		after timestamptz NOT NULL
	);
});

my $single_count = 3000;

# One statement in a session of its own, running alongside pgbench.
my $single =
  psql_in_background($node, timed_ids_sql('single', $single_count));

my $bench = run_pgbench(
	$node, q{
INSERT INTO ids (before, id, after)
SELECT before, id, clock_timestamp()
FROM (SELECT before, snowflake_nextval() AS id
	  FROM (SELECT clock_timestamp() AS before OFFSET 0) a
	  OFFSET 0) b;
},
	'-c' => 4,
	'-j' => 2,
	'-T' => 5);

psql_finished_ok($single, 'single-statement session');

is($bench->{exit}, 0, 'pgbench exits with status 0');
is($bench->{stderr}, '', 'pgbench reports no errors on stderr');
is($bench->{failed}, 0, 'pgbench reports no failed transactions');

is($node->safe_psql('postgres', 'SELECT count(*) FROM ids'),
	$bench->{processed}, 'one row per transaction pgbench processed');
is($node->safe_psql('postgres', 'SELECT count(*) FROM single'),
	$single_count, 'the single statement inserted every row');

is( $node->safe_psql(
		'postgres', q{
		SELECT count(*) = count(DISTINCT id)
		FROM (SELECT id FROM ids UNION ALL SELECT id FROM single) u}),
	't',
	'every ID from every session is distinct');

check_strictly_increasing($node, 'ids', 'backend', 'ord',
	'pgbench, within each connection');
check_strictly_increasing($node, 'single', undef, 'n',
	'one statement, in generate_series order');

my $all = q{
	(SELECT before, id, after FROM ids
	 UNION ALL
	 SELECT before, id, after FROM single) u,
	snowflake_parse(u.id) p};

is($node->safe_psql('postgres', "SELECT count(*) FROM $all WHERE before > after"),
	'0', 'the clock readings around each call are in order');

is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM $all WHERE p.worker_id <> 3 OR p.sequence NOT IN (0, 1)"),
	'0',
	'every ID has worker 3 and a one-bit sequence');

is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM $all WHERE p.created_at < date_trunc('milliseconds', before)"),
	'0',
	'no ID is older than the clock reading taken before the call');

is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM $all WHERE p.created_at - after > interval '$max_drift ms'"),
	'0',
	"no ID is more than max_drift ($max_drift ms) ahead of the clock reading taken after the call");

# Two IDs per millisecond cannot keep up with five busy sessions, so IDs must
# have borrowed future milliseconds, up to (nearly) the limit.  With the drift
# capped there and no call failing, callers held at the cap must have waited.
my ($borrowed, $max_ahead) = split /\|/,
  $node->safe_psql(
	'postgres', qq{
	SELECT count(*) FILTER (WHERE p.created_at > after),
		   extract(epoch FROM max(p.created_at - after)) * 1000
	FROM $all});
cmp_ok($borrowed, '>', 100,
	"many IDs were ahead of the clock, i.e. borrowed ($borrowed)");
cmp_ok($max_ahead, '>=', $max_drift / 2,
	"IDs ran ahead of the clock by a good part of max_drift ($max_ahead ms)");

unlike(
	slurp_file($node->logfile),
	qr/too far behind/,
	'no call gave up waiting for the clock');

#
# b) A non-default layout: 5 worker bits, 8 sequence bits (so 50 timestamp
# bits), another epoch and worker id.
#
set_snowflake_conf(
	$node,
	'snowflake.worker_bits' => 5,
	'snowflake.sequence_bits' => 8,
	'snowflake.epoch' => '2020-06-01 00:00:00+00',
	'snowflake.worker_id' => 17);
$node->restart;

is( $node->safe_psql(
		'postgres',
		q{SELECT current_setting('snowflake.worker_bits') || ' '
			  || current_setting('snowflake.sequence_bits') || ' '
			  || current_setting('snowflake.worker_id') || ' '
			  || current_setting('snowflake.epoch')}),
	'5 8 17 2020-06-01 00:00:00+00',
	'the new layout is in effect');

my $layout_count = 5000;
$node->safe_psql(
	'postgres', qq{
	CREATE TABLE layout_ids (n int NOT NULL, id bigint PRIMARY KEY);
	INSERT INTO layout_ids
	SELECT n, snowflake_nextval() FROM generate_series(1, $layout_count) n});

is( $node->safe_psql(
		'postgres', 'SELECT count(*), count(DISTINCT id) FROM layout_ids'),
	"$layout_count|$layout_count",
	'new layout: every ID is distinct');
check_strictly_increasing($node, 'layout_ids', undef, 'n',
	'new layout, one statement');

my $parsed = q{layout_ids l, snowflake_parse(l.id) p};

is( $node->safe_psql(
		'postgres', qq{
		SELECT count(*) FROM $parsed
		WHERE p.worker_id <> 17
		   OR p.sequence NOT BETWEEN 0 AND 255
		   OR abs(extract(epoch FROM p.created_at - now())) >= 60}),
	'0',
	'new layout: every ID parses to worker 17 and a time within a minute of now');

# SQL gives << and | the same precedence, so every step is parenthesized.
is( $node->safe_psql(
		'postgres', qq{
		SELECT count(*) FROM $parsed
		WHERE ((((extract(epoch FROM p.created_at - '2020-06-01 00:00:00+00')
				  * 1000)::bigint << 13)
				| (17::bigint << 8))
			   | p.sequence) <> l.id}),
	'0',
	'new layout: recomposing created_at, worker and sequence gives the ID');

is( $node->safe_psql(
		'postgres', qq{
		SELECT count(*) FROM $parsed
		WHERE (l.id >> 8) & 31 <> p.worker_id
		   OR l.id & 255 <> p.sequence
		   OR '2020-06-01 00:00:00+00'::timestamptz
			  + (l.id >> 13) * interval '1 ms' <> p.created_at}),
	'0',
	'new layout: the fields sit in the bits the layout says');

check_no_crash($node, 'after overflow and layout change');

$node->stop;
done_testing();
