
# Copyright (c) 2026, snowflake contributors

# The background mark writer ("snowflake mark writer") keeps the persisted
# mark ahead while IDs are issued, so that calls rarely write it themselves:
#
# - under a steady trickle of single-row inserts, marks_ahead grows and
#   marks_by_callers stays near 0, also when the inserts come further apart
#   than a mark reaches ahead (a second);
# - a server idle for longer than the writer lingers after the last ID
#   writes nothing: no WAL, no mark file, no counter moves;
# - the writer terminated, or killed (which restarts the server): IDs stay
#   unique and increasing, callers write their own marks meanwhile, and the
#   writer comes back;
# - the clock stepped back while it runs: no ID below an earlier one;
# - the writer slow (held in its write by the t/mark_stall.c shim): calls
#   that cross the mark wait for its write rather than write a second one,
#   calls under the mark go on; a writer that exits in the middle of its
#   write leaves no stuck flag; on storage where every write is slow, it
#   starts its writes early enough that calls do not wait for them; a fast
#   shutdown during its write completes;
# - a standby runs no writer, and once promoted it does.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes ();

need_libfaketime();

my $writer_sql = q{SELECT pid FROM pg_stat_activity
	WHERE backend_type = 'snowflake mark writer'};

# The pid of the node's mark writer, once it runs.
sub writer_pid
{
	my ($node) = @_;

	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM ($writer_sql) w")
	  or die 'timed out waiting for the mark writer to run';
	return $node->safe_psql('postgres', $writer_sql);
}

sub stats
{
	my ($node, $columns) = @_;
	return $node->safe_psql('postgres', "SELECT $columns FROM snowflake_stats");
}

# $count single-row inserts as phase $phase, $gap seconds apart, each its
# own transaction, in one session.
sub trickle
{
	my ($node, $phase, $count, $gap) = @_;

	$node->safe_psql('postgres',
		join('',
			map {
				"INSERT INTO ids (id, phase) VALUES (snowflake_nextval(), $phase);\n"
				  . "SELECT pg_sleep($gap);\n"
			} 1 .. $count));
	return;
}

# IDs unique, and increasing in the order they were inserted.
sub ids_ok
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($node, $test_name) = @_;

	is($node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM ids'),
		't', "$test_name: no ID issued twice");
	check_strictly_increasing($node, 'ids', undef, 'n', $test_name);
	return;
}

my $setup = q{
	CREATE EXTENSION snowflake;
	CREATE TABLE ids (id bigint NOT NULL, phase int NOT NULL, n bigserial);
};

#
# A node under the fake clock, quiet apart from us: no autovacuum, no timed
# checkpoint during the test.
#
my $node = snowflake_node('writer', worker_id => 1,
	conf => {
		autovacuum => 'off',
		checkpoint_timeout => '1h',
		restart_after_crash => 'on'
	});
start_with_fake_clock($node, '+0');
$node->safe_psql('postgres', $setup);
my $pid = writer_pid($node);
ok($pid > 0, 'the mark writer runs on a primary');

# Trickle: the first insert crosses the mark and writes it; then 10 inserts
# a second for 3 s, three mark windows: the writer keeps the mark ahead.
trickle($node, 1, 1, 0);
$node->safe_psql('postgres', 'SELECT snowflake_stats_reset()');
trickle($node, 1, 30, 0.1);
my ($by_callers, $ahead, $written) =
  split /\|/, stats($node, 'marks_by_callers, marks_ahead, marks_written');
cmp_ok($ahead, '>=', 2, "trickle: the writer wrote marks ahead ($ahead)");
cmp_ok($by_callers, '<=', 1,
	"trickle: calls wrote (almost) no marks themselves ($by_callers)");
is($written, $by_callers + $ahead, 'marks_written is their sum');
is(stats($node, 'mark_id >= last_id'), 't', 'the mark covers the last ID');
ids_ok($node, 'trickle');

# Sparse: inserts 1.5 s apart, each further from the last than a mark
# reaches ahead.  The writer keeps the mark ahead between them, so only the
# first may write it itself.
$node->safe_psql('postgres', 'SELECT snowflake_stats_reset()');
trickle($node, 1, 5, 1.5);
($by_callers, $ahead) = split /\|/, stats($node, 'marks_by_callers, marks_ahead');
cmp_ok($by_callers, '<=', 1,
	"sparse: calls 1.5 s apart wrote (almost) no marks themselves ($by_callers)");
cmp_ok($ahead, '>=', 3, "sparse: the writer wrote marks ahead ($ahead)");
ids_ok($node, 'sparse');

# Idle: the writer goes on for 10 s after the last ID, then nothing is
# written for 4 s, four mark windows: no WAL, no mark file, no counter.
Time::HiRes::sleep(10 + 1.5);
my $mark_file = $node->data_dir . '/snowflake.mark';
my @before = (
	$node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()'),
	(stat $mark_file)[9],
	stats($node, 'marks_written, mark_id'));
sleep 4;
my @after = (
	$node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()'),
	(stat $mark_file)[9],
	stats($node, 'marks_written, mark_id'));
is($after[0], $before[0], 'idle: no WAL written');
is($after[1], $before[1], 'idle: the mark file is not rewritten');
is($after[2], $before[2], 'idle: no mark written');
is($node->safe_psql('postgres', "SELECT count(*) FROM ($writer_sql) w"),
	'1', 'idle: the writer is still there, asleep');

# After the idle time the mark lies in the past: the first call writes it
# itself (what a call after a quiet spell pays), the next ones do not.
trickle($node, 2, 1, 0);
is(stats($node, "marks_by_callers - $by_callers"),
	'1', 'after a quiet spell, the first call writes the mark itself');

# The writer terminated: calls write their own marks until the postmaster
# starts it again (after a few seconds), then it takes over.
$node->safe_psql('postgres', 'SELECT snowflake_stats_reset()');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
$node->poll_query_until('postgres',
	"SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $pid)")
  or die 'timed out waiting for the mark writer to end';
trickle($node, 3, 25, 0.1);
cmp_ok(stats($node, 'marks_by_callers'), '>=', 1,
	'writer gone: calls write the marks themselves');
ids_ok($node, 'writer terminated');
my $new_pid = writer_pid($node);
isnt($new_pid, $pid, 'the postmaster started the writer again');
$node->safe_psql('postgres', 'SELECT snowflake_stats_reset()');
trickle($node, 4, 1, 0);
trickle($node, 4, 20, 0.1);
cmp_ok(stats($node, 'marks_ahead'), '>=', 2, 'the restarted writer writes marks ahead');
$pid = $new_pid;

# The clock steps back 5 s while IDs trickle and the writer writes: IDs
# keep increasing, continuing from the last timestamp.
my $max = max_id($node);
trickle($node, 5, 10, 0.1);
set_fake_clock($node, '-5');
trickle($node, 5, 30, 0.1);
is($node->safe_psql('postgres', "SELECT bool_and(id > $max) FROM ids WHERE phase = 5"),
	't', 'clock stepped back: every new ID is above the earlier ones');
ids_ok($node, 'clock stepped back');
set_fake_clock($node, '+0');
check_no_crash($node, 'after terminating the writer and stepping the clock');

# The writer killed: the postmaster reinitializes, the mark comes back from
# the file and WAL, and so does the writer.
$max = max_id($node);
kill 'KILL', $pid;
$node->poll_query_until('postgres', "SELECT count(*) = 1 FROM ($writer_sql) w WHERE pid <> $pid")
  or die 'timed out waiting for the server and the writer to come back';
like(slurp_file($node->logfile), qr/snowflake mark writer.*terminated by signal 9/,
	'the killed writer made the postmaster reinitialize');
issue_above($node, 6, 1000, $max, 'after the writer was killed, new IDs are above every earlier one');
trickle($node, 6, 10, 0.1);
ids_ok($node, 'writer killed');
$node->stop;

#
# A node with the stall shim: the writer held in its write.
#
my $slow = snowflake_node('slow', worker_id => 1);
my $stall = start_with_mark_stall($slow);
$slow->safe_psql('postgres', $setup);
writer_pid($slow);

# Issue one ID when the mark leads the clock by less than half a window and
# more than a little (the call needs no mark itself; the writer, awake since
# the first call, writes the next one as the lead runs short), then wait
# until the writer is held in its write.
sub writer_held
{
	my ($node) = @_;

	trickle($node, 0, 1, 0);
	stall_set($stall, 'rename', 'snowflake mark writer');

	# wait in the server, so that the call comes right after the moment
	$node->safe_psql('postgres', q{
		DO $$
		BEGIN
			WHILE (SELECT mark_time - clock_timestamp() >= interval '450 ms'
					 FROM snowflake_stats) LOOP
				PERFORM pg_sleep(0.01);
			END LOOP;
		END
		$$;
		INSERT INTO ids (id, phase) VALUES (snowflake_nextval(), 10);});
	stall_wait($stall, 'rename');
	return;
}

# A session that inserts once the clock has passed the mark.
sub crossing_insert
{
	my ($node, $name, $phase) = @_;
	local $ENV{PGAPPNAME} = $name;

	$node->poll_query_until('postgres',
		'SELECT clock_timestamp() > mark_time FROM snowflake_stats')
	  or die 'timed out waiting for the clock to pass the mark';
	return psql_in_background($node,
		"INSERT INTO ids (id, phase) SELECT snowflake_nextval(), $phase FROM generate_series(1, 10)");
}

sub waits_on_extension
{
	my ($node, $name) = @_;
	return $node->poll_query_until('postgres', qq{
		SELECT wait_event_type = 'Extension' FROM pg_stat_activity
		 WHERE application_name = '$name' AND state = 'active'});
}

$slow->safe_psql('postgres', 'SELECT snowflake_stats_reset()');
writer_held($slow);
my $held = $slow->safe_psql('postgres', 'SELECT marks_ahead FROM snowflake_stats');
my $crossing = crossing_insert($slow, 'crossing', 11);
ok(waits_on_extension($slow, 'crossing'),
	'writer held: a call that crosses the mark waits for the writer\'s write');
stall_release($stall, 'rename');
psql_finished_ok($crossing, 'the call that waited');
cmp_ok(stats($slow, 'marks_ahead'), '>', $held, 'the held write finished and was counted');
ids_ok($slow, 'writer held');

# The writer exits in the middle of its write: the waiting call wakes and
# writes the mark itself; the writer comes back.
my $slow_pid = writer_pid($slow);
writer_held($slow);
$crossing = crossing_insert($slow, 'orphaned', 12);
ok(waits_on_extension($slow, 'orphaned'), 'a call waits for the held writer');
my $by_callers_before = stats($slow, 'marks_by_callers');
stall_set($stall, 'rename.exit', 'snowflake mark writer');
stall_release($stall, 'rename');
psql_finished_ok($crossing, 'the call whose writer exited mid-write');
cmp_ok(stats($slow, 'marks_by_callers'), '>', $by_callers_before,
	'it wrote the mark itself');
isnt(writer_pid($slow), $slow_pid, 'the writer that exited came back');
ids_ok($slow, 'writer exited mid-write');
check_no_crash($slow, 'after the writer exited mid-write');

# Slow storage: every mark write takes 300 ms (the shim sleeps before its
# rename), longer than the lead the writer leaves when writes are quick.
# It learns that from its first slow write and starts the next ones early
# enough that calls at a steady pace do not wait for them.  Calls that did
# wait show as calls taking over 100 ms; one is allowed, for a machine that
# stalls for other reasons.
$slow->safe_psql('postgres', q{
	CREATE FUNCTION call_times(calls int, gap float8)
	RETURNS SETOF float8 LANGUAGE plpgsql AS $$
	DECLARE
		started timestamptz;
	BEGIN
		FOR i IN 1 .. calls LOOP
			started := clock_timestamp();
			INSERT INTO ids (id, phase) VALUES (snowflake_nextval(), 14);
			RETURN NEXT 1000 * extract(epoch FROM clock_timestamp() - started);
			PERFORM pg_sleep(gap);
		END LOOP;
	END
	$$;});
stall_set($stall, 'rename.delay', 300);
my ($waited, $slowest) = split /\|/, $slow->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE ms > 100), round(max(ms))
	  FROM call_times(240, 0.05) WITH ORDINALITY AS c(ms, n) WHERE n > 40});
cmp_ok($waited, '<=', 1,
	"slow storage: the writer starts early, calls do not wait for it (slowest call $slowest ms)");
stall_release($stall, 'rename.delay');
ids_ok($slow, 'slow storage');

# A fast shutdown while the writer is held in its write completes once the
# write goes on; after the restart, IDs are above every earlier one.
writer_held($slow);
$max = max_id($slow);
my $stop = IPC::Run::start(
	[
		$slow->installed_command('pg_ctl'), '-D', $slow->data_dir, '-m', 'fast', '-w', '-t',
		$PostgreSQL::Test::Utils::timeout_default, 'stop'
	],
	'>', \my $stop_out, '2>', \my $stop_err);
Time::HiRes::sleep(1);
stall_release($stall, 'rename');
$stop->finish;
is($? >> 8, 0, 'a fast shutdown during the writer\'s write completes');
$slow->_update_pid(0);
$slow->start;
issue_above($slow, 13, 1000, $max, 'after that shutdown, new IDs are above every earlier one');
$slow->stop;

#
# A standby runs no writer; promoted, it does.
#
my $primary = snowflake_node('primary', worker_id => 2,
	init => { allows_streaming => 1 });
$primary->start;
$primary->safe_psql('postgres', $setup);
writer_pid($primary);
$primary->backup('b1');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b1', has_streaming => 1);
$standby->start;
trickle($primary, 20, 10, 0.1);
$primary->wait_for_catchup($standby, 'replay');
is($standby->safe_psql('postgres', "SELECT count(*) FROM ($writer_sql) w"),
	'0', 'a standby runs no mark writer');
$max = max_id($standby);
$primary->stop;
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'timed out waiting for the promotion';
ok(writer_pid($standby) > 0, 'once promoted, it runs the mark writer');
$standby->safe_psql('postgres', 'SELECT snowflake_stats_reset()');
trickle($standby, 21, 1, 0);

# That first call wrote a mark a second past its ID, which is the last
# replayed mark if the clock has not passed it yet: up to two seconds
# ahead of the clock.  The writer's first two marks follow within three
# seconds; four seconds of calls leave room for a slow machine.
trickle($standby, 21, 40, 0.1);
cmp_ok(stats($standby, 'marks_ahead'), '>=', 2, 'the promoted server\'s writer writes marks ahead');
is($standby->safe_psql('postgres', "SELECT bool_and(id > $max) FROM ids WHERE phase = 21"),
	't', 'the promoted server issues IDs above the old primary\'s');
$standby->stop;

done_testing();
