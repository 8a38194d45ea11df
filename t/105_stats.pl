
# Copyright (c) 2026, snowflake contributors

# snowflake_stats reports the marks, waits, borrows, clock
# rollbacks and refusals that the scenarios cause; snowflake_stats_reset()
# zeroes the counters but not the state; a restart starts them from 0.
#
# The layout has 4 sequence bits (16 IDs per ms), so bursts outrun the clock.
# The server's clock is faked so that it can be stepped back while it runs.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use SnowflakeTest;
use Test::More;
use Time::HiRes ();

need_libfaketime();

my $counters =
  'ids_issued, marks_written, clock_rollbacks, largest_rollback_ms, '
  . 'borrows, waits, wait_time_ms, refusals';

my $node = snowflake_node('stats', worker_id => 1,
	conf => { 'snowflake.sequence_bits' => 4 });
start_with_fake_clock($node, '+0');
clock_offset_ok($node, 0, 'fake clock at +0 reads the real time');

sub stats
{
	my ($columns) = @_;
	return $node->safe_psql('postgres', "SELECT $columns FROM snowflake_stats");
}

$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is(stats("worker_id, timestamp_bits, worker_bits, sequence_bits"),
	'1|49|10|4', 'the layout and worker id');
is(stats($counters), '0|0|0|0|0|0|0|0', 'a new server starts with zero counters');
is(stats('last_id IS NULL, mark_id IS NULL, mark_time IS NULL'),
	't|t|t', 'no ID and no mark yet');

# Marks: one durable write per window of ID time, not one per call.
$node->safe_psql('postgres', 'SELECT snowflake_nextval()');
$node->safe_psql('postgres', 'SELECT pg_sleep(1.2)');
$node->safe_psql('postgres',
	'SELECT count(snowflake_nextval()) FROM generate_series(1, 1000)');
is( stats(
		'ids_issued, marks_written BETWEEN 2 AND 4, mark_id >= last_id, '
		  . 'mark_time >= (snowflake_parse(last_id)).created_at'),
	'1001|t|t|t',
	'marks: 1001 IDs over more than a second wrote a few marks, and the mark covers the last ID');

# Waits: with max_drift = 0 the 17th ID in a millisecond waits for the next.
reload_snowflake_conf($node, 'snowflake.max_drift' => '0');
$node->safe_psql('postgres',
	'SELECT count(snowflake_nextval()) FROM generate_series(1, 2000)');
is(stats('waits > 0, wait_time_ms > 0, refusals'),
	't|t|0', 'waits: max_drift = 0 makes a burst wait for the clock');

# Borrows: with the default max_drift a burst runs ahead of the clock.
reload_snowflake_conf($node, 'snowflake.max_drift' => undef);
my $borrows_before = stats('borrows');
$node->safe_psql('postgres',
	'SELECT count(snowflake_nextval()) FROM generate_series(1, 100000)');
is(stats("borrows > $borrows_before, drift_ms > 0"),
	't|t', 'borrows: a burst borrows time ahead of the clock');

# Clock rollbacks: step the server's clock back 5 s while it runs.  The
# generator measures the step from its previous clock reading, so it sees
# 5000 ms less the real time that passed between the two calls; that time
# is measured here rather than assumed small (a loaded machine takes
# seconds to run the psql calls in between).
is(stats('clock_rollbacks, largest_rollback_ms'), '0|0', 'no rollback yet');
my $log_offset = -s $node->logfile;
# from before the call whose clock reading the step is measured from
my $before_step = Time::HiRes::time();
$node->safe_psql('postgres', 'SELECT snowflake_nextval()');
set_fake_clock($node, '-5');
clock_offset_ok($node, -5, 'the clock stepped back by 5 s');
$node->safe_psql('postgres', 'SELECT snowflake_nextval()');
my $between_ms = int((Time::HiRes::time() - $before_step) * 1000) + 1;
$node->safe_psql('postgres', 'SELECT snowflake_nextval()');
my $low  = 5000 - $between_ms - 10;
my $high = 5000 + 10;
is( stats("clock_rollbacks, largest_rollback_ms BETWEEN $low AND $high"),
	'1|t',
	"rollbacks: one rollback counted, 5000 ms less the $between_ms ms between the calls");
my @moved = logged_rollbacks($node, $log_offset);
is(scalar @moved, 1, 'the rollback is logged once');
ok(@moved && $moved[0] >= $low && $moved[0] <= $high,
	"the log says by how much: 5000 ms less the time between the calls ("
	  . ($moved[0] // 'none') . ')');

# Refusals: with the clock 30 s behind, the last ID is far more than
# max_drift ahead of it however long the steps above took, and max_wait is
# too short to wait for it.
set_fake_clock($node, '-30');
clock_offset_ok($node, -30, 'the clock stepped back by 30 s');
reload_snowflake_conf($node,
	'snowflake.max_drift' => '1000',
	'snowflake.max_wait' => '100');
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', 'SELECT snowflake_nextval()');
like(
	$stderr,
	qr/ERROR:  system clock is too far behind the last snowflake ID/,
	'the clock too far behind: snowflake_nextval() refuses');
is(stats('refusals'), '1', 'refusals: the refusal is counted');

# Reset: counters to zero, state untouched.  (The server's clock is still
# 30 s behind, so stats_reset is compared with the server's clock.)  The
# mark may still move up meanwhile: the mark writer keeps it ahead for 10 s
# after the last ID, and under libfaketime it runs on the real clock, which
# has passed the last ID once bursts are held to max_borrow.
my $state = stats('last_id, mark_id, mark_time, stats_reset');
my ($last_id, $mark_id, $mark_time, $reset_before) = split /\|/, $state;
is( stats(
		'ids_issued > 0 AND marks_written > 0 AND clock_rollbacks > 0 AND '
		  . 'largest_rollback_ms > 0 AND borrows > 0 AND waits > 0 AND '
		  . 'wait_time_ms > 0 AND refusals > 0'),
	't', 'before the reset every counter is non-zero');
$node->safe_psql('postgres', 'SELECT snowflake_stats_reset()');
# (the mark writer, still keeping the mark ahead, may count a mark of its
# own right after the reset: marks written by calls must stay at 0)
is( stats(
		'ids_issued, marks_by_callers, marks_written = marks_ahead, clock_rollbacks, '
		  . 'largest_rollback_ms, borrows, waits, wait_time_ms, refusals'),
	'0|0|t|0|0|0|0|0|0',
	'snowflake_stats_reset() zeroes every counter');
is( stats(
		"last_id = $last_id AND mark_id >= $mark_id AND mark_time >= '$mark_time' "
		  . "AND stats_reset <> '$reset_before' "
		  . "AND stats_reset BETWEEN clock_timestamp() - interval '10 s' AND clock_timestamp()"
	),
	't', 'the reset keeps the state and records when it happened');

# A restart starts the counters from 0 and the state from the mark.
reload_snowflake_conf($node,
	'snowflake.max_drift' => undef,
	'snowflake.max_wait' => undef);
$node->safe_psql('postgres', 'SELECT count(snowflake_nextval()) FROM generate_series(1, 10)');
restart_with_fake_clock($node, '+0');
is(stats($counters), '0|0|0|0|0|0|0|0', 'after a restart the counters start from 0');
is(stats("mark_id >= $last_id"), 't', 'after a restart the mark is kept');

$node->stop;
done_testing();
