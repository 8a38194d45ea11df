
# Copyright (c) 2026, snowflake contributors

# The system clock stepping back, simulated with libfaketime on the server
# only (psql keeps the real clock).  IDs must keep strictly increasing: they
# continue from the last issued timestamp while that stays within
# snowflake.max_drift of the clock, calls wait for the clock when
# snowflake.max_wait covers the rest, and otherwise fail at once.  The step
# is logged once.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(time);

need_libfaketime();

my $node = snowflake_node('rollback', worker_id => 4);
start_with_fake_clock($node, '+0');
ok(!exists $ENV{LD_PRELOAD}, 'the test itself does not run under faketime');

# The server follows the offset file; the test's clock does not.
cmp_ok(abs(server_clock_offset($node)), '<', 10,
	'offset +0: server clock agrees with the real clock');
set_fake_clock($node, '-3600');
my $behind = -server_clock_offset($node);
ok($behind > 3590 && $behind < 3610,
	"offset -3600: server clock is an hour behind (by $behind s)");
set_fake_clock($node, '+0');
cmp_ok(abs(server_clock_offset($node)), '<', 10,
	'offset +0 again: server clock agrees with the real clock');

# Every ID the test obtains goes into "issued" in the order it was issued:
# only one session generates at a time, so "ord" follows issuing order.
$node->safe_psql(
	'postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE issued (ord bigserial PRIMARY KEY, id bigint NOT NULL);
});
my $issued_count = 0;

# Issue $n IDs in one statement of a new session; returns psql's stderr.
sub issue_batch
{
	my ($n) = @_;
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"INSERT INTO issued (id) SELECT snowflake_nextval() FROM generate_series(1, $n)"
	);
	$issued_count += $n if $ret == 0;
	return $stderr;
}

# Issue one ID in a new session; returns (psql's exit code, stderr, seconds).
sub issue_one
{
	my $start = time();
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		'INSERT INTO issued (id) VALUES (snowflake_nextval()) RETURNING id');
	$issued_count++ if $ret == 0;
	return ($ret, $stderr, time() - $start);
}

#
# a) The clock steps back 5 s, well within the default max_drift (60 s):
# IDs go on increasing from where they were, with no error, and the step is
# logged once however many calls follow it.
#
# The generator measures a step from its previous clock reading, so it sees
# 5 s less the real time that passed since then: that time is measured here
# (from before the batch that makes the last reading before the step)
# rather than assumed small, as a loaded machine takes seconds to run the
# psql calls in between.
my $before_step = time();
is(issue_batch(2000), '', 'before the step: 2000 IDs');

my $log_offset = -s $node->logfile;
set_fake_clock($node, '-5');
is(issue_batch(2000), '', 'clock 5 s back: 2000 IDs in one statement');
my $between_ms = int((time() - $before_step) * 1000) + 1;

# The IDs being issued now are ahead of the server's (stepped back) clock,
# by the 5 s less the time since the last reading before the step: proof
# that the step really happened under the generator.
my $ahead = $node->safe_psql(
	'postgres', q{
	WITH i AS (INSERT INTO issued (id) VALUES (snowflake_nextval()) RETURNING id)
	SELECT extract(epoch FROM p.created_at - clock_timestamp())
	FROM i, snowflake_parse(i.id) p});
$issued_count++;
my $since_step = time() - $before_step;
cmp_ok($ahead, '>', 5 - $since_step - 0.01,
	"clock 5 s back: IDs run ahead of the clock (by $ahead s, $since_step s after the last reading before the step)"
);

for my $i (1 .. 3)
{
	is(issue_batch(1000), '', "clock 5 s back: batch $i of 1000 more IDs");
}
my $before_second_step;    # before the last call that reads the clock
for my $i (1 .. 5)
{
	$before_second_step = time();
	my ($ret, $stderr) = issue_one();
	is($ret, 0, "clock 5 s back: single call $i succeeds");
}

my @steps = logged_rollbacks($node, $log_offset);
is(scalar(@steps), 1, 'the step back is logged once for all those calls');
ok( @steps == 1 && $steps[0] >= 5000 - $between_ms - 10 && $steps[0] <= 5000,
	"the logged step is 5000 ms less the time between the readings, at most $between_ms ms ("
	  . join(', ', @steps) . ')');

#
# b) With max_drift 2000 and max_wait 500, a step back of far more than that
# fails, at once.  When the clock returns, generation resumes.
#
reload_snowflake_conf($node,
	'snowflake.max_drift' => 2000,
	'snowflake.max_wait' => 500);

$log_offset = -s $node->logfile;
set_fake_clock($node, '-30');
my $between_steps_ms;
for my $i (1 .. 2)
{
	my ($ret, $stderr, $seconds) = issue_one();
	$between_steps_ms //= int((time() - $before_second_step) * 1000) + 1;
	isnt($ret, 0, "clock 30 s back: call $i fails");
	like(
		$stderr,
		qr/ERROR:  system clock is too far behind the last snowflake ID/,
		"clock 30 s back: call $i: error message");
	cmp_ok($seconds, '<', 5,
		"clock 30 s back: call $i fails at once instead of waiting for the clock");
}

# The last clock reading was already 5 s back, so this step is 25 s less the
# time between that reading and the first call above (measured, as in a).
@steps = logged_rollbacks($node, $log_offset);
is(scalar(@steps), 1, 'the second step back is logged once');
ok( @steps == 1
	  && $steps[0] >= 25000 - $between_steps_ms - 10
	  && $steps[0] <= 25000,
	"the second logged step is 25000 ms less the time between the readings, at most $between_steps_ms ms ("
	  . join(', ', @steps) . ')');

set_fake_clock($node, '+0');
is(issue_batch(1000), '', 'clock back to real time: generation resumes');

# A step back that max_wait covers makes the call wait instead.  One session
# issues an ID, the clock steps back 3 s, and the next call is 1 s past
# max_drift, less the time between the two calls: it must wait until 1 s
# after the first call's clock reading, then succeed.  That time is measured
# (from before the first call), not assumed small.
reload_snowflake_conf($node,
	'snowflake.max_drift' => 2000,
	'snowflake.max_wait' => 1500);

my $session = $node->background_psql('postgres', on_error_stop => 0);
my $first_call = time();
$session->query_safe(
	'INSERT INTO issued (id) VALUES (snowflake_nextval())');
$issued_count++;
set_fake_clock($node, '-3');
my $start = time();
my ($out, $failed) =
  $session->query('INSERT INTO issued (id) VALUES (snowflake_nextval())');
my $waited = time() - $start;
is($failed, 0, 'clock 3 s back, within max_drift + max_wait: the call succeeds');
$issued_count++ unless $failed;
my $must_wait = 1 - ($start - $first_call) - 0.01;
cmp_ok($waited, '>=', $must_wait,
	"clock 3 s back: the call waited for the clock until 1 s after the first call ($waited s, at least $must_wait s)"
);
$session->quit;

set_fake_clock($node, '+0');
is(issue_batch(1000), '', 'clock back to real time again: generation goes on');

# Across all of the above, no ID was repeated and none was smaller than one
# issued before it.
is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM issued'),
	"$issued_count|$issued_count", 'every ID issued is recorded, and distinct');
check_strictly_increasing($node, 'issued', undef, 'ord',
	'across every clock step, in issuing order');

check_no_crash($node, 'after the clock steps');
$node->stop;

#
# c) max_drift = 0 (never ahead of the clock, as Twitter's generator) with
# two IDs per millisecond: two sessions at full speed overflow the sequence
# all the time, and must wait for the next millisecond instead of borrowing
# it or failing.  This needs no clock steps, and a node of its own: nothing
# issued under another layout may constrain it.
#
my $strict_node = snowflake_node(
	'strict',
	worker_id => 4,
	conf => {
		'snowflake.max_drift' => 0,
		'snowflake.max_wait' => 1000,
		'snowflake.sequence_bits' => 1
	});
$strict_node->start;
is($strict_node->safe_psql('postgres', 'SHOW snowflake.max_drift'),
	'0', 'strict: max_drift is 0');

$strict_node->safe_psql(
	'postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE strict_ids (
		session int NOT NULL,
		n int NOT NULL,
		before timestamptz NOT NULL,
		id bigint PRIMARY KEY,
		after timestamptz NOT NULL
	)});

# As in 003_overflow_and_layout.pl, "before", snowflake_nextval() and
# "after" run in that order for each row.
my $strict_count = 2000;
my @sessions = map {
	psql_in_background($strict_node,
		timed_ids_sql('strict_ids', $strict_count, session => $_))
} 1 .. 2;
for my $s (1 .. 2)
{
	psql_finished_ok($sessions[ $s - 1 ], "strict: session $s");
}

is( $strict_node->safe_psql(
		'postgres', 'SELECT count(*), count(DISTINCT id) FROM strict_ids'),
	2 * $strict_count . '|' . 2 * $strict_count,
	'strict: every ID is recorded, and distinct');
check_strictly_increasing($strict_node, 'strict_ids', 'session', 'n',
	'strict, within each session');

my $strict = 'strict_ids s, snowflake_parse(s.id) p';
is( $strict_node->safe_psql(
		'postgres', "SELECT count(*) FROM $strict WHERE p.created_at > after"),
	'0',
	'strict: no ID is ahead of a clock reading taken after the call');
is( $strict_node->safe_psql(
		'postgres',
		"SELECT count(*) FROM $strict WHERE p.created_at < date_trunc('milliseconds', before)"
	),
	'0',
	'strict: no ID is older than a clock reading taken before the call');

# Overflow was routine: many milliseconds hold both of their IDs.  No ID ran
# ahead and no call failed, so the callers that found a millisecond used up
# waited for the next one.
my $full_ms = $strict_node->safe_psql(
	'postgres', qq{
	SELECT count(*) FROM (SELECT p.created_at FROM $strict
						  GROUP BY 1 HAVING count(*) = 2) full_ms});
cmp_ok($full_ms, '>', 200,
	"strict: the sequence overflowed in many milliseconds ($full_ms)");

check_no_crash($strict_node, 'strict');

$strict_node->stop;
done_testing();
