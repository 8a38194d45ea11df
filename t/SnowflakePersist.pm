# Copyright: the snowflake extension's authors; see the README.

=pod

=head1 NAME

SnowflakePersist - helpers for the TAP tests of the persisted mark (issue 3)

=head1 DESCRIPTION

Nodes that preload snowflake, a fake clock for the server process only
(libfaketime, driven by a file so it can be changed while the server runs),
and the restart-with-the-clock-behind scenario shared by
t/101_restart_clock_behind.pl and t/102_crash_clock_behind.pl.

Only the server is faked: the LD_PRELOAD and FAKETIME_* variables are set
for the duration of $node->start and removed again, so psql and pgbench run
at the real time.  Compare 64-bit IDs in SQL: helpers return them as text.

libfaketime caveat: the postmaster also reports the real time in the log
lines it writes from its signal handlers (e.g. "database system is ready to
accept connections").  Backends, which run the generator, and the auxiliary
processes see the fake time.

=cut

package SnowflakePersist;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use File::Spec;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();

our @EXPORT = qw(
  $libfaketime
  new_snowflake_node
  set_fake_clock
  start_with_fake_clock
  clock_offset_ok
  max_id
  clock_behind_restart_scenario
);

our $libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

=pod

=item new_snowflake_node($name, init => { ... }, conf => 'lines')

A new, initialized node that preloads snowflake with worker id 1, plus any
extra postgresql.conf lines.  The node is not started.

=cut

sub new_snowflake_node
{
	my ($name, %params) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init(%{ $params{init} // {} });
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'snowflake'\n"
		  . "snowflake.worker_id = 1\n"
		  . ($params{conf} // ''));
	return $node;
}

# The file libfaketime reads the offset from, one per node.  An absolute
# path: the server runs in its data directory, and libfaketime silently
# keeps the real time if it cannot open the file.
sub _clock_file
{
	my ($node) = @_;
	return File::Spec->rel2abs($node->basedir . '/faketime');
}

=pod

=item set_fake_clock($node, $offset)

Set the node's fake clock offset, e.g. "+0" or "-600" (seconds).  A running
server faked with start_with_fake_clock sees the change at once (the file is
read on every clock call), so this also steps the clock while it runs.  The
file is replaced by a rename, so the server never reads a half-written one.

=cut

sub set_fake_clock
{
	my ($node, $offset) = @_;
	my $file = _clock_file($node);

	open my $fh, '>', "$file.tmp" or die "could not write \"$file.tmp\": $!";
	print $fh "$offset\n";
	close $fh or die "could not close \"$file.tmp\": $!";
	rename "$file.tmp", $file or die "could not rename to \"$file\": $!";
	return;
}

=pod

=item start_with_fake_clock($node, $offset, %start_params)

Set the fake clock to $offset and start the node with libfaketime preloaded
into the server (and pg_ctl, whose start-up check compares its clock with
the server's).  The environment is restored afterwards.  FAKETIME_NO_SHM
keeps libfaketime from sharing state between processes through shared
memory: every process simply reads the offset from the file.

=cut

sub start_with_fake_clock
{
	my ($node, $offset, %start_params) = @_;

	set_fake_clock($node, $offset);
	local $ENV{LD_PRELOAD}                   = $libfaketime;
	local $ENV{FAKETIME_TIMESTAMP_FILE}      = _clock_file($node);
	local $ENV{FAKETIME_NO_CACHE}            = '1';
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	local $ENV{FAKETIME_NO_SHM}              = '1';
	return $node->start(%start_params);
}

=pod

=item clock_offset_ok($node, $expected, $test_name)

Check that the server's clock is $expected seconds off the real time (this
process's clock), within 5 seconds.

=cut

sub clock_offset_ok
{
	my ($node, $expected, $test_name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my $server = $node->safe_psql('postgres',
		'SELECT extract(epoch FROM clock_timestamp())');
	my $offset = $server - Time::HiRes::time();
	ok(abs($offset - $expected) < 5,
		"$test_name (offset $offset s, expected $expected s)");
	return;
}

=pod

=item max_id($node, $where)

max(id) of table ids (optionally restricted by a WHERE clause), as text.
Dies if there is none, so a comparison against it is never vacuous.

=cut

sub max_id
{
	my ($node, $where) = @_;
	my $sql = 'SELECT max(id) FROM ids' . (defined $where ? " WHERE $where" : '');
	my $max = $node->safe_psql('postgres', $sql);

	die "no IDs for \"$sql\"" unless $max =~ /^\d+$/;
	return $max;
}

=pod

=item clock_behind_restart_scenario($stop_mode)

Issue 3, tests 1 and 2.  Issue IDs, stop the node with $stop_mode ("fast"
or "immediate"), start it with the clock 10 minutes behind:

=over

=item with snowflake.max_drift raised to allow it, every new ID is larger
than every earlier one, drift_ms shows the 10 minutes and the log is clean;

=item with the default max_drift, snowflake_nextval() refuses with a clear
error and no ID is issued;

=item back at the real time, IDs are issued again, all larger than before.

=back

=cut

sub clock_behind_restart_scenario
{
	my ($mode) = @_;
	my $node = new_snowflake_node("clock_behind_$mode");
	my ($ret, $stdout, $stderr);

	start_with_fake_clock($node, '+0');
	clock_offset_ok($node, 0, 'fake clock at +0 reads the real time');

	$node->safe_psql('postgres', q{
		CREATE EXTENSION snowflake;
		CREATE TABLE ids (id bigint NOT NULL, phase int NOT NULL);
		INSERT INTO ids SELECT snowflake_nextval(), 1 FROM generate_series(1, 1000);
	});
	is($node->safe_psql('postgres', 'SELECT count(*) FROM ids WHERE phase = 1'),
		'1000', 'phase 1: IDs issued at the real time');
	my $max1 = max_id($node);

	# Phase 2: 10 minutes behind, allowed by max_drift.
	$node->append_conf('postgresql.conf', 'snowflake.max_drift = 700000');
	$node->stop($mode);
	my $log_offset = -s $node->logfile;
	start_with_fake_clock($node, '-600');
	clock_offset_ok($node, -600, "after $mode stop: the server's clock is 10 minutes behind");

	$node->safe_psql('postgres',
		'INSERT INTO ids SELECT snowflake_nextval(), 2 FROM generate_series(1, 1000)');
	is( $node->safe_psql(
			'postgres',
			"SELECT count(*), bool_and(id > $max1) FROM ids WHERE phase = 2"),
		'1000|t',
		"after $mode stop, clock 10 min behind: every new ID is larger than every earlier one");
	is( $node->safe_psql(
			'postgres', 'SELECT count(*) = count(DISTINCT id) FROM ids'),
		't', 'no ID issued twice');
	# The drift is 10 minutes, plus the mark window (~1 s) the first IDs
	# start from, minus the seconds since phase 1.
	is( $node->safe_psql(
			'postgres',
			'SELECT drift_ms BETWEEN 570000 AND 620000, ids_issued, clock_rollbacks, refusals FROM snowflake_stats'),
		't|1000|0|0',
		'snowflake_stats: drift_ms is about 10 minutes, no rollback or refusal counted');
	my $log = slurp_file($node->logfile, $log_offset);
	unlike($log, qr/WARNING|ERROR|FATAL|PANIC/, 'server log: no warning or error');
	unlike($log, qr/clock moved back/,
		'server log: a restart with the clock behind is not a rollback while running');

	# Phase 3: still 10 minutes behind, default max_drift.
	my $max2 = max_id($node);
	$node->adjust_conf('postgresql.conf', 'snowflake.max_drift', undef);
	$node->stop($mode);
	start_with_fake_clock($node, '-600');
	clock_offset_ok($node, -600, 'still 10 minutes behind');
	is( $node->safe_psql(
			'postgres',
			"SELECT setting FROM pg_settings WHERE name = 'snowflake.max_drift'"),
		'60000', 'max_drift is back at its default');

	($ret, $stdout, $stderr) =
	  $node->psql('postgres', 'SELECT snowflake_nextval()');
	isnt($ret, 0, 'default max_drift: snowflake_nextval() fails');
	is($stdout, '', 'default max_drift: no ID returned');
	like(
		$stderr,
		qr/ERROR:  system clock is too far behind the last snowflake ID/,
		'default max_drift: the error says the clock is too far behind');
	($ret, $stdout, $stderr) = $node->psql('postgres',
		'INSERT INTO ids SELECT snowflake_nextval(), 3 FROM generate_series(1, 10)');
	isnt($ret, 0, 'default max_drift: an INSERT with new IDs fails');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM ids WHERE phase = 3'),
		'0', 'default max_drift: no ID stored');
	is( $node->safe_psql(
			'postgres',
			'SELECT ids_issued, refusals FROM snowflake_stats'),
		'0|2', 'snowflake_stats: no ID issued, both refusals counted');

	# Phase 4: back at the real time.
	$node->stop($mode);
	start_with_fake_clock($node, '+0');
	clock_offset_ok($node, 0, 'the clock is back at the real time');
	$node->safe_psql('postgres',
		'INSERT INTO ids SELECT snowflake_nextval(), 4 FROM generate_series(1, 1000)');
	is( $node->safe_psql(
			'postgres',
			"SELECT count(*), bool_and(id > $max2) FROM ids WHERE phase = 4"),
		'1000|t',
		'back at the real time: IDs are issued again, all larger than before');
	is( $node->safe_psql(
			'postgres', 'SELECT count(*), count(DISTINCT id) FROM ids'),
		'3000|3000', 'no ID issued twice over all restarts');

	$node->stop;
	return;
}

1;
