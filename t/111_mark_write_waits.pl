
# Copyright (c) 2026, snowflake contributors

# Backends waiting for another backend's mark write can be cancelled, are
# woken however the write ends, and the server goes on issuing IDs above
# every earlier one.
#
# One backend at a time writes a new mark; the others that need it sleep
# until the write ends.  A write can take seconds when storage stalls, so
# that sleep must answer pg_cancel_backend() and statement_timeout.  The
# shim t/mark_stall.c holds a mark write before its rename, which to the
# generator looks like a stalled fsync; it can also make the write fail with
# an ERROR, or end the writing backend as a FATAL error would.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes ();

# How long a cancelled or timed-out wait may take to end: far more than it
# needs, far less than the stall would last if the wait ignored it.
my $end_within = 30;

my $node = snowflake_node('mark_wait', worker_id => 1);
my $stall = start_with_mark_stall($node);
$node->safe_psql('postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE ids (id bigint NOT NULL, phase int NOT NULL);
	INSERT INTO ids SELECT snowflake_nextval(), 1 FROM generate_series(1, 1000);
});

# Insert IDs as $phase in a session of its own, named $name in
# pg_stat_activity, with more settings from %options.
sub insert_in_background
{
	my ($name, $phase, %options) = @_;
	local $ENV{PGAPPNAME} = $name;
	local $ENV{PGOPTIONS} = $options{pgoptions} // '';

	return psql_in_background($node,
		"INSERT INTO ids SELECT snowflake_nextval(), $phase FROM generate_series(1, 100)");
}

# Start a writer whose first ID needs a new mark, held before the rename.
sub start_stalled_writer
{
	my ($phase) = @_;

	return start_held_insert(
		$node, $stall,
		sub { insert_in_background("writer_$phase", $phase); },
		sub { $node->safe_psql('postgres', "DELETE FROM ids WHERE phase = $phase"); });
}

# Wait until session $name sleeps; returns its wait event type and pid.
sub wait_until_sleeping
{
	my ($name) = @_;
	my $query = qq{
		SELECT wait_event_type, pid FROM pg_stat_activity
		 WHERE application_name = '$name' AND state = 'active'
		   AND wait_event_type IS NOT NULL};

	$node->poll_query_until('postgres', "SELECT EXISTS ($query)")
	  or die "timed out waiting for $name to wait";
	return split /\|/, $node->safe_psql('postgres', $query);
}

# Whether the psql run ends within $seconds; if it does, it is finished.
sub ends_within
{
	my ($run, $seconds) = @_;
	my $deadline = Time::HiRes::time() + $seconds;

	while ($run->{handle}->pumpable && Time::HiRes::time() < $deadline)
	{
		$run->{handle}->pump_nb;
		Time::HiRes::sleep(0.1);
	}
	return 0 if $run->{handle}->pumpable;
	$run->{handle}->finish;
	return 1;
}

#
# A writer held in its mark write; three backends wait for it.  One is
# cancelled, one times out, one waits until the write ends.
#
my $writer = start_stalled_writer(2);
my $cancelled = insert_in_background('cancelled', 3);
my ($event, $pid) = wait_until_sleeping('cancelled');
is($event, 'Extension', 'a backend that needs the mark sleeps while another writes it');
my $timed_out = insert_in_background('timed_out', 4,
	pgoptions => '-c statement_timeout=1s');
my $patient = insert_in_background('patient', 5);
wait_until_sleeping('patient');

$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
ok(ends_within($cancelled, $end_within),
	'pg_cancel_backend() ends the wait for the mark write');
like($cancelled->{stderr}, qr/ERROR:  canceling statement due to user request/,
	'the cancelled wait fails with the usual error');
ok(ends_within($timed_out, $end_within),
	'statement_timeout ends the wait for the mark write');
like($timed_out->{stderr}, qr/ERROR:  canceling statement due to statement timeout/,
	'the timed-out wait fails with the usual error');

stall_release($stall, 'rename');
psql_finished_ok($writer, 'the writer, once its write goes on,');
psql_finished_ok($patient, 'the backend that waited for the write');
is($node->safe_psql('postgres', 'SELECT count(*) FROM ids WHERE phase IN (3, 4)'),
	'0', 'the cancelled and timed-out inserts stored nothing');

#
# The write fails with an ERROR: its backend gets the error, the waiter
# wakes, writes the mark itself and gets its IDs.
#
$writer = start_stalled_writer(6);
my $waiter = insert_in_background('waiter_7', 7);
wait_until_sleeping('waiter_7');
stall_set($stall, 'rename.fail', 'INSERT');
stall_release($stall, 'rename');
ok(ends_within($writer, $end_within), 'a failed write ends');
like($writer->{stderr}, qr/ERROR:  could not rename file "snowflake\.mark\.tmp" to "snowflake\.mark": Input\/output error/,
	'the failed write reports the error');
ok(ends_within($waiter, $end_within) && $waiter->{stderr} eq '',
	'after a failed write, the waiter writes the mark itself and goes on')
  or diag $waiter->{stderr};

#
# The writing backend exits in the middle of the write, as on a FATAL
# error: the waiter is woken and writes the mark itself.
#
$writer = start_stalled_writer(8);
$waiter = insert_in_background('waiter_9', 9);
wait_until_sleeping('waiter_9');
stall_set($stall, 'rename.exit', 'INSERT');
stall_release($stall, 'rename');
ok(ends_within($writer, $end_within), 'a writer that exits mid-write ends');
isnt($writer->{stderr}, '', 'the writer that exited reports a lost connection');
ok(ends_within($waiter, $end_within) && $waiter->{stderr} eq '',
	'after the writer exited, the waiter writes the mark itself and goes on')
  or diag $waiter->{stderr};

# Every ID is distinct and the server goes on, above all of them.
is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM ids'),
	'1400|1400', 'IDs stored: phases 1, 2, 5, 7 and 9, each distinct');
my $max = max_id($node);
issue_above($node, 10, 1000, $max,
	'after the stalls, new IDs are above every earlier one');
is( $node->safe_psql(
		'postgres', "SELECT mark_id >= $max FROM snowflake_stats"),
	't', 'the mark covers every ID issued');
check_no_crash($node, 'after the stalled, failed and abandoned writes');

$node->stop;
done_testing();
