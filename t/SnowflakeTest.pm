
# Copyright (c) 2026, snowflake contributors

=head1 NAME

SnowflakeTest - helpers shared by the snowflake TAP tests

=head1 SYNOPSIS

  use FindBin;
  use lib $FindBin::RealBin;
  use SnowflakeTest;

  my $node = snowflake_node('main', worker_id => 1);
  $node->start;
  $node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

=head1 DESCRIPTION

One way to make a node, a fake clock for the server only, pgbench and psql
runs in the background, and the checks more than one test makes.  What only
one test needs stays in that test.  Compare 64-bit IDs in SQL: helpers
return them as text.

=cut

package SnowflakeTest;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use File::Find ();
use File::Path ();
use File::Copy ();
use File::Spec;
use File::Temp;
use FindBin;
use IPC::Run;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();

our @EXPORT = qw(
  skip_all_unless
  skip_unless
  need_package
  snowflake_node
  set_snowflake_conf
  reload_snowflake_conf
  need_libfaketime
  set_fake_clock
  fake_clock_offset_to
  start_with_fake_clock
  restart_with_fake_clock
  fake_clock_bindir
  server_clock_offset
  clock_offset_ok
  start_with_mark_stall
  start_held_insert
  stall_set
  stall_release
  stall_wait
  start_pgbench
  finish_pgbench
  run_pgbench
  psql_in_background
  psql_finished_ok
  timed_ids_sql
  psql_fails_like
  check_strictly_increasing
  issue_above
  check_no_crash
  logged_rollbacks
  max_id
  column_defaults
  subscribe_registries
  read_mark_file
  issue_ids_across_marks
  issue_until_lifetime_end
  clock_behind_restart_scenario
  active_active_workload
  active_active_converged
  first_program
  copy_tree
  run_program
  registry_node
  registry_conninfo
  lease_node
  add_ids_table
  issue_ids
  wait_for_lease
  lease_stats
  lease_row
  shorten_lease
  keeper_pid
  collect_ids
  check_no_duplicates
  check_fenced
  check_twin_refused
);

# libfaketime lives in the directory of this system's multiarch triplet
# (x86_64-linux-gnu, aarch64-linux-gnu, ...).
my $multiarch = `dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null` // '';
chomp $multiarch;
my $libfaketime = "/usr/lib/$multiarch/faketime/libfaketime.so.1";

=head2 Missing dependencies

A test whose dependencies are missing skips, so that C<make installcheck>
runs on a machine without them.  scripts/test.sh installs all of them and
sets SNOWFLAKE_REQUIRE_ALL=1: then a skip would hide a broken setup, so each
of these fails instead.

=over

=item skip_all_unless($ok, $reason)

Unless $ok, skip the whole test (C<plan skip_all>), or, under
SNOWFLAKE_REQUIRE_ALL, fail it.

=cut

sub skip_all_unless
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($ok, $reason) = @_;

	return if $ok;
	plan skip_all => $reason unless $ENV{SNOWFLAKE_REQUIRE_ALL};
	fail("$reason, and SNOWFLAKE_REQUIRE_ALL is set: this test must not be skipped");
	done_testing();
	exit;
}

=item skip_unless($ok, $reason, $count)

In a C<SKIP:> block: unless $ok, skip its $count tests, or, under
SNOWFLAKE_REQUIRE_ALL, fail and then skip them.

=cut

sub skip_unless
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($ok, $reason, $count) = @_;

	return if $ok;
	fail("$reason, and SNOWFLAKE_REQUIRE_ALL is set: these tests must not be skipped")
	  if $ENV{SNOWFLAKE_REQUIRE_ALL};
	skip $reason, $count;
}

=item need_package($package, $ok, $reason)

For a test that needs a Debian package that is not packaged for every
major (an add-on such as postgresql-NN-pglogical): unless $ok, skip the
whole test if $package is one that Debian does not package for the major
under test, and otherwise behave as C<skip_all_unless>, so that under
SNOWFLAKE_REQUIRE_ALL the test fails.  Which packages Debian lacks for
which major is written down once, in NOT_PACKAGED_<major> in
scripts/lib.sh; scripts/test.sh passes that major's list in
SNOWFLAKE_NOT_PACKAGED (space-separated) and lists in its summary the
tests skipped this way.  In $package, C<@PG@> stands for the major.  The
package itself goes into TEST_PACKAGES in scripts/lib.sh.  Example:

  need_package('postgresql-@PG@-pglogical',
	-e "$pkglibdir/pglogical.so", 'pglogical is not installed');

=cut

sub need_package
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($package, $ok, $reason) = @_;
	my $major = _pg_major();
	my %not_packaged =
	  map { $_ => 1 } split ' ', ($ENV{SNOWFLAKE_NOT_PACKAGED} // '');

	$package =~ s/\@PG\@/$major/g;
	return if $ok;
	plan skip_all =>
	  "Debian does not package $package for PostgreSQL $major (NOT_PACKAGED_$major in scripts/lib.sh)"
	  if $not_packaged{$package};
	skip_all_unless(0, "$reason ($package)");
	return;
}

=back

=cut

# The major version of the PostgreSQL under test (the pg_config in PATH,
# which make installcheck puts first).
sub _pg_major
{
	my $version = `pg_config --version`;

	die "pg_config --version failed" if $? != 0;
	$version =~ /^PostgreSQL (\d+)/
	  or die "cannot read the major from pg_config --version: $version";
	return $1;
}

=head2 Nodes and settings

=over

=item snowflake_node($name, %options)

Initialize (but do not start) a node.  Options: C<preload =E<gt> 0> to leave
snowflake out of shared_preload_libraries; C<worker_id =E<gt> N> to set
snowflake.worker_id (unset otherwise); C<conf =E<gt> { name =E<gt> value }>
for more postgresql.conf lines (values are quoted); C<init =E<gt> { ... }>
for $node->init (e.g. C<allows_streaming =E<gt> 1>).  TimeZone is pinned to
UTC, parallel query is off so that "one statement" means "one process", and
postgresql.conf ends by including F<snowflake_test.conf>, which
C<set_snowflake_conf> rewrites.

=cut

sub snowflake_node
{
	my ($name, %options) = @_;
	my @unknown = grep { !/^(preload|worker_id|conf|init)$/ } keys %options;
	die "snowflake_node: unknown option(s) @unknown" if @unknown;
	my %conf = %{ $options{conf} // {} };
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init(%{ $options{init} // {} });

	$conf{shared_preload_libraries} = 'snowflake' if $options{preload} // 1;
	$conf{'snowflake.worker_id'} = $options{worker_id}
	  if defined $options{worker_id};
	$node->append_conf('postgresql.conf',
		"TimeZone = 'UTC'\n"
		  . "max_parallel_workers_per_gather = 0\n"
		  . join('', map { "$_ = '$conf{$_}'\n" } sort keys %conf)
		  . "include_if_exists = 'snowflake_test.conf'\n");
	return $node;
}

=item set_snowflake_conf($node, %settings)

Replace the contents of the node's F<snowflake_test.conf> (included last by
postgresql.conf, so it wins) with the given settings; undef values are left
out.  Takes effect at the next restart or reload.

=cut

sub set_snowflake_conf
{
	my ($node, %settings) = @_;
	my $file = $node->data_dir . '/snowflake_test.conf';

	open my $fh, '>', $file or die "could not write $file: $!";
	print $fh "$_ = '$settings{$_}'\n"
	  for grep { defined $settings{$_} } sort keys %settings;
	close $fh or die "could not close $file: $!";
	return;
}

=item reload_snowflake_conf($node, %settings)

C<set_snowflake_conf>, reload, and wait until new sessions see every named
setting at its value (undef: at its default).

=cut

sub reload_snowflake_conf
{
	my ($node, %settings) = @_;

	set_snowflake_conf($node, %settings);
	$node->reload;
	foreach my $name (sort keys %settings)
	{
		my $value = $settings{$name};
		my $check =
		  'SELECT setting = '
		  . (defined $value ? "'$value'" : 'boot_val')
		  . " FROM pg_settings WHERE name = '$name'";

		$node->poll_query_until('postgres', $check)
		  or die "timed out waiting for the reload: $check";
	}
	return;
}

=back

=head2 A fake clock for the server

libfaketime is preloaded into pg_ctl and the server it starts, and shifts
their clock by an offset read from a file on every clock call, so the offset
can be changed while the server runs.  The environment is restored once the
node is up: psql and pgbench keep the real time.  Backends and auxiliary
processes see the fake time, but the postmaster logs the real time in the
lines it writes from its signal handlers.

=over

=item need_libfaketime()

Skip the whole test if libfaketime is not installed (see
C<skip_all_unless>).

=cut

sub need_libfaketime
{
	skip_all_unless(-e $libfaketime, "libfaketime not found at $libfaketime");
	return;
}

# The node's offset file.  An absolute path: the server runs in its data
# directory, and libfaketime silently keeps the real time if it cannot open
# the file.
sub _clock_file
{
	my ($node) = @_;
	return File::Spec->rel2abs($node->basedir . '/faketime');
}

=item set_fake_clock($node, $offset)

Set the node's clock offset, e.g. "+0" or "-600" (seconds).  A server
running under the fake clock sees it at once in its sessions; its lease
keeper, a background worker running since the start, was seen to keep the
old offset (the lease tests never move a running server's clock).  The
file is replaced by a rename, so the server never reads a half-written
one.

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

=item fake_clock_offset_to($instant)

The offset, for C<set_fake_clock> and the start functions, that puts a
server's clock at $instant (seconds since 1970-01-01 00:00 UTC, as from
C<Time::Local::timegm>), or less than a second after it, now; from there
it runs at the real pace.  For a test whose checks depend on the time of
day or the date: it pins them, whenever the test runs.  Compute it just
before it is set, as the real time moves on.

=cut

sub fake_clock_offset_to
{
	my ($instant) = @_;

	return sprintf('%+d', POSIX::ceil($instant - Time::HiRes::time()));
}

# The environment that puts a process under the node's fake clock.
# FAKETIME_NO_SHM: every process reads the file itself rather than sharing
# state through shared memory.
sub _fake_clock_env
{
	my ($node) = @_;
	return (
		LD_PRELOAD                   => $libfaketime,
		FAKETIME_TIMESTAMP_FILE      => _clock_file($node),
		FAKETIME_NO_CACHE            => '1',
		FAKETIME_DONT_FAKE_MONOTONIC => '1',
		FAKETIME_NO_SHM              => '1');
}

# Set the offset and run $action with libfaketime in the environment of
# pg_ctl (whose start-up check compares its clock with the server's) and so
# of the server.
sub _under_fake_clock
{
	my ($node, $offset, $action) = @_;
	my %env = _fake_clock_env($node);

	set_fake_clock($node, $offset);
	local @ENV{ keys %env } = values %env;
	return $action->();
}

=item start_with_fake_clock($node, $offset, %start_params)

=item restart_with_fake_clock($node, $offset)

Set the offset and start (restart) the node under the fake clock.  The
environment is restored afterwards.

=cut

sub start_with_fake_clock
{
	my ($node, $offset, %start_params) = @_;
	return _under_fake_clock($node, $offset,
		sub { $node->start(%start_params) });
}

sub restart_with_fake_clock
{
	my ($node, $offset) = @_;
	return _under_fake_clock($node, $offset, sub { $node->restart });
}

=item fake_clock_bindir($node, $offset)

For a server that a tool starts itself (pg_auto_failover's keeper runs the
F<postgres> next to the F<pg_ctl> it is given): set the node's offset and
make, in the node's base directory, a directory of links to the installed
programs in which F<postgres> is a script that runs the real one under the
node's fake clock.  The tool keeps the real time.  Returns the directory.

=cut

sub fake_clock_bindir
{
	my ($node, $offset) = @_;
	my $bindir = $node->config_data('--bindir');
	my $dir = File::Spec->rel2abs($node->basedir . '/fake_clock_bin');
	my %env = _fake_clock_env($node);

	set_fake_clock($node, $offset);
	mkdir $dir or die "could not create \"$dir\": $!";
	opendir my $dh, $bindir or die "could not read \"$bindir\": $!";
	foreach my $program (grep { !/^\./ && $_ ne 'postgres' } readdir $dh)
	{
		symlink "$bindir/$program", "$dir/$program"
		  or die "could not link \"$dir/$program\": $!";
	}
	closedir $dh;

	open my $fh, '>', "$dir/postgres" or die "could not write \"$dir/postgres\": $!";
	print $fh "#!/bin/sh\n",
	  (map { "$_='$env{$_}'; export $_\n" } sort keys %env),
	  "exec '$bindir/postgres' \"\$@\"\n";
	close $fh or die "could not close \"$dir/postgres\": $!";
	chmod 0755, "$dir/postgres" or die "could not chmod \"$dir/postgres\": $!";
	return $dir;
}

=item server_clock_offset($node)

How many seconds the server's clock is ahead of this process's.

=cut

sub server_clock_offset
{
	my ($node) = @_;
	my $server = $node->safe_psql('postgres',
		'SELECT extract(epoch FROM clock_timestamp())');
	return $server - Time::HiRes::time();
}

=item clock_offset_ok($node, $expected, $test_name)

Check that the server's clock is $expected seconds off the real time,
within 5 seconds.

=cut

sub clock_offset_ok
{
	my ($node, $expected, $test_name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my $offset = server_clock_offset($node);
	ok(abs($offset - $expected) < 5,
		"$test_name (offset $offset s, expected $expected s)");
	return;
}

=back

=head2 Stalling the mark write

F<t/mark_stall.c> is a tiny LD_PRELOAD shim, built here with the system C
compiler and preloaded into the server only, that holds a process inside a
window while a control file exists: "rename" stalls a mark write between
writing the new mark file and renaming it into place; "copy" stalls a base
backup just after it opened F<snowflake.mark> to copy it.  "rename.fail"
makes the next such rename fail with EIO, "rename.exit" ends the process
there as a FATAL error would, and "rename.delay" makes every such rename
sleep for the milliseconds it holds, like slow storage.  See the shim's
header.

=over

=item start_with_mark_stall($node)

Build the shim (once per test run) and start the node with it preloaded.
Returns the directory that holds the control files.

=cut

my $mark_stall_lib;

sub start_with_mark_stall
{
	my ($node) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir;

	if (!defined $mark_stall_lib)
	{
		my $src = File::Spec->catfile($FindBin::RealBin, 'mark_stall.c');
		$mark_stall_lib = PostgreSQL::Test::Utils::tempdir . '/mark_stall.so';
		PostgreSQL::Test::Utils::system_or_bail($ENV{CC} // 'cc', '-shared',
			'-fPIC', '-o', $mark_stall_lib, $src, '-ldl');
	}
	local $ENV{LD_PRELOAD}          = $mark_stall_lib;
	local $ENV{SNOWFLAKE_STALL_DIR} = $dir;
	$node->start;
	return $dir;
}

=item start_held_insert($node, $dir, $start, $discard)

Start, with C<$start> (which returns a C<psql_in_background> run of an
INSERT), an INSERT whose first ID needs a new mark, and hold its mark write
in the "rename" window; returns the run once it is held.  First waits until
the clock has passed the mark.  The background mark writer may still write
that mark first (it writes ahead while IDs were issued in the last few
seconds), and then the INSERT needs no write of its own and ends without
being held: then C<$discard> removes what it stored, and it tries again.
Dies after the default timeout, saying so.

=cut

sub start_held_insert
{
	my ($node, $dir, $start, $discard) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;

	for (;;)
	{
		$node->poll_query_until('postgres',
			'SELECT clock_timestamp() > mark_time FROM snowflake_stats')
		  or die 'timed out waiting for the clock to pass the mark';
		stall_set($dir, 'rename', 'INSERT');
		my $run = $start->();

		# held, or ended: then it needed no mark write of its own
		until (-e "$dir/rename.stalled" || !$run->{handle}->pumpable)
		{
			die 'timed out waiting for an INSERT to be held in its mark write'
			  if time() > $deadline;
			$run->{handle}->pump_nb;
			Time::HiRes::sleep(0.05);
		}
		return $run if -e "$dir/rename.stalled";

		$run->{handle}->finish;
		stall_release($dir, 'rename');
		note 'the INSERT needed no mark write of its own (the mark writer wrote the mark first): trying again';
		$discard->();
	}
}

=item stall_set($dir, $name [, $content])

=item stall_release($dir, $name)

Create (remove) control file $name, holding $content if given: from then
on, the shim holds (lets go of) every process that reaches that window.
For "rename", "rename.fail" and "rename.exit", a $content such as
C<'INSERT'> or C<'snowflake mark writer'> aims it at processes whose title
contains that text only, so that a test holds the process it means and not
the background mark writer, whose writes it cannot time.

=item stall_wait($dir, $name)

Wait until a process is held in window $name.  Dies after the default
timeout.

=cut

sub stall_set
{
	my ($dir, $name, $content) = @_;

	open my $fh, '>', "$dir/$name" or die "could not create $dir/$name: $!";
	print $fh $content if defined $content;
	close $fh or die "could not close $dir/$name: $!";
	return;
}

sub stall_release
{
	my ($dir, $name) = @_;

	unlink "$dir/$name" or die "could not remove $dir/$name: $!";
	return;
}

sub stall_wait
{
	my ($dir, $name) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;

	until (-e "$dir/$name.stalled")
	{
		die "timed out waiting for a process to stall at \"$name\""
		  if time() > $deadline;
		Time::HiRes::sleep(0.05);
	}
	return;
}

=back

=head2 pgbench and psql in the background

=over

=item start_pgbench($node, $script, @options)

Start pgbench against the postgres database with $script as its only custom
script (and C<-n>, so it needs no pgbench tables), plus @options.  Returns a
hash reference with C<handle> (the IPC::Run harness, with a timeout),
C<stdout> and C<stderr>.

=item finish_pgbench($bench)

Wait for it and add to the hash C<exit> (the exit status) and, parsed from
stdout, C<processed> (transactions actually processed) and C<failed>
(failed transactions; undef if not reported).  Returns the hash.

=item run_pgbench($node, $script, @options)

Both at once.

=cut

sub start_pgbench
{
	my ($node, $script, @options) = @_;
	my ($fh, $file) = File::Temp::tempfile(
		'pgbench_XXXX',
		DIR => PostgreSQL::Test::Utils::tempdir,
		SUFFIX => '.sql');

	print $fh $script;
	close $fh or die "could not close $file: $!";

	my @cmd = (
		$node->installed_command('pgbench'),
		'-n', '-f', $file,
		'-h', $node->host, '-p', $node->port,
		@options, 'postgres');
	my %bench = (stdout => '', stderr => '');

	note "running: @cmd";
	$bench{handle} = IPC::Run::start(
		\@cmd, '>', \$bench{stdout}, '2>', \$bench{stderr},
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	return \%bench;
}

sub finish_pgbench
{
	my ($bench) = @_;

	$bench->{handle}->finish;
	$bench->{exit} = $? >> 8;
	note "pgbench stdout:\n$bench->{stdout}";
	note "pgbench stderr:\n$bench->{stderr}" if $bench->{stderr} ne '';

	($bench->{processed}) =
	  $bench->{stdout} =~ /number of transactions actually processed: (\d+)/;
	($bench->{failed}) =
	  $bench->{stdout} =~ /number of failed transactions: (\d+)/;
	return $bench;
}

sub run_pgbench
{
	return finish_pgbench(start_pgbench(@_));
}

=item psql_in_background($node, $sql)

Start psql running $sql as one command in a session of its own.  Returns a
hash reference with C<handle>, C<stdout> and C<stderr>.

=item psql_finished_ok($run, $test_name)

Wait for it; check that it exits with status 0 and reports no errors.

=cut

sub psql_in_background
{
	my ($node, $sql) = @_;
	my %run = (stdout => '', stderr => '');

	$run{handle} = IPC::Run::start(
		[
			$node->installed_command('psql'), '-X', '-v', 'ON_ERROR_STOP=1',
			'-h', $node->host, '-p', $node->port, '-d', 'postgres', '-c', $sql
		],
		'>', \$run{stdout}, '2>', \$run{stderr},
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	return \%run;
}

sub psql_finished_ok
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($run, $test_name) = @_;

	$run->{handle}->finish;
	is($? >> 8, 0, "$test_name exits with status 0");
	is($run->{stderr}, '', "$test_name reports no errors");
	return;
}

=item timed_ids_sql($table, $count, %constants)

An INSERT of $count IDs into $table's columns n (1 to $count), before, id
and after, plus columns set to the given constants.  "before" and "after"
are clock readings taken around each snowflake_nextval() call: the OFFSET 0
subqueries cannot be flattened, so for each row "before" is evaluated,
then snowflake_nextval() one level up, then "after" at the top.

=cut

sub timed_ids_sql
{
	my ($table, $count, %constants) = @_;
	my @names = sort keys %constants;
	my $columns = join('', map { "$_, " } @names);
	my $values = join('', map { "$constants{$_}, " } @names);

	return qq{
		INSERT INTO $table (${columns}n, before, id, after)
		SELECT ${values}n, before, id, clock_timestamp()
		FROM (SELECT n, before, snowflake_nextval() AS id
			  FROM (SELECT n, clock_timestamp() AS before
					FROM generate_series(1, $count) AS n
					OFFSET 0) a
			  OFFSET 0) b};
}

=back

=head2 Checks

=over

=item psql_fails_like($node, $sql, $expected, $test_name)

Run $sql in a new session and check that it fails with stderr matching
$expected.  Returns stderr, for further checks.

=cut

sub psql_fails_like
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($node, $sql, $expected, $test_name) = @_;
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $sql);

	isnt($ret, 0, "$test_name: fails");
	like($stderr, $expected, "$test_name: error message");
	return $stderr;
}

=item check_strictly_increasing($node, $from, $partition, $order, $test_name)

Check, in SQL, that column C<id> of the relation $from (any FROM item)
strictly increases along $order within each group of $partition (an SQL
expression, or undef for one group).  Also checks that there was something
to compare, so that an empty relation cannot pass.

=cut

sub check_strictly_increasing
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($node, $from, $partition, $order, $test_name) = @_;
	my $over =
	  (defined $partition ? "PARTITION BY $partition " : '')
	  . "ORDER BY $order";
	my $result = $node->safe_psql(
		'postgres', qq{
		SELECT count(prev), count(*) FILTER (WHERE id <= prev)
		FROM (SELECT id, lag(id) OVER ($over) AS prev FROM $from) s});
	my ($pairs, $bad) = split /\|/, $result;

	cmp_ok($pairs, '>', 0, "$test_name: there are IDs to compare");
	is($bad, 0, "$test_name: IDs strictly increase");
	return;
}

=item issue_above($node, $phase, $count, $floor, $test_name)

Insert $count new IDs into the table C<ids (id bigint, phase int)> as phase
$phase, then check that every one of them is larger than $floor (an ID, as
text: every ID issued before) and that no ID in C<ids> repeats.

=cut

sub issue_above
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($node, $phase, $count, $floor, $test_name) = @_;

	$node->safe_psql('postgres',
		"INSERT INTO ids SELECT snowflake_nextval(), $phase FROM generate_series(1, $count)");
	is( $node->safe_psql(
			'postgres',
			"SELECT count(*), bool_and(id > $floor) FROM ids WHERE phase = $phase"),
		"$count|t",
		$test_name);
	is($node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM ids'),
		't', "$test_name: no ID issued twice");
	return;
}

=item check_no_crash($node, $test_name)

Check that the node still answers queries and that its log shows no server
process killed by a signal.

=cut

sub check_no_crash
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($node, $test_name) = @_;

	is($node->safe_psql('postgres', 'SELECT 1'), '1',
		"$test_name: server still answers");
	unlike(
		slurp_file($node->logfile),
		qr/terminated by signal|terminating any other active server processes/,
		"$test_name: no server process crashed");
	return;
}

=item logged_rollbacks($node, $log_offset)

The N of every "snowflake: system clock moved back by N ms" line in the
node's log after $log_offset.

=cut

sub logged_rollbacks
{
	my ($node, $log_offset) = @_;
	my $log = slurp_file($node->logfile, $log_offset);
	return $log =~ /snowflake: system clock moved back by (\d+) ms/g;
}

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

=item column_defaults($node, $dbname, \@tables, \@columns)

Those columns of those tables (relation names), each as "table.column type
default", the default being "no default" where there is none, followed by
" identity" for an identity column; ordered by table and column, joined with
", ".  A missing column is left out, so compare the whole string.

=cut

sub column_defaults
{
	my ($node, $dbname, $tables, $columns) = @_;
	my $list = sub {
		join(', ', map { "'" . ($_ =~ s/'/''/gr) . "'" } @_);
	};
	my $tables_list = $list->(@$tables);
	my $columns_list = $list->(@$columns);
	return $node->safe_psql(
		$dbname, qq{
		SELECT string_agg(format('%s.%s %s %s', c.relname, a.attname,
		                         format_type(a.atttypid, a.atttypmod),
		                         coalesce(pg_get_expr(d.adbin, d.adrelid), 'no default')
		                         || CASE a.attidentity WHEN '' THEN '' ELSE ' identity' END),
		                  ', ' ORDER BY c.relname, a.attname)
		  FROM pg_attribute a
		  JOIN pg_class c ON c.oid = a.attrelid
		  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		 WHERE c.relname IN ($tables_list) AND a.attname IN ($columns_list)});
}

=item subscribe_registries($node_a, $node_b)

Makes two servers' registries a mesh: each subscribes to the other's
publication "registry" (created by the test), with disable_on_error, as
subscription "reg_from_b" on $node_a and "reg_from_a" on $node_b; returns when
both have copied the other's rows.

=cut

sub subscribe_registries
{
	my ($node_a, $node_b) = @_;

	for ([ $node_a, $node_b, 'reg_from_b' ], [ $node_b, $node_a, 'reg_from_a' ])
	{
		my ($subscriber, $publisher, $subname) = @$_;
		my $connstr = $publisher->connstr . ' dbname=postgres';
		$subscriber->safe_psql('postgres',
			"CREATE SUBSCRIPTION $subname CONNECTION '$connstr' PUBLICATION registry WITH (disable_on_error = true)"
		);
	}
	$node_a->wait_for_subscription_sync($node_b, 'reg_from_b');
	$node_b->wait_for_subscription_sync($node_a, 'reg_from_a');
	return;
}

=item read_mark_file($node, $exists_name, $format_name)

Check that the node's F<snowflake.mark> exists (test $exists_name) and is
one line holding an ID in decimal (test $format_name).  Returns the ID as
text.

=cut

sub read_mark_file
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($node, $exists_name, $format_name) = @_;
	my $mark_file = $node->data_dir . '/snowflake.mark';

	ok(-f $mark_file, $exists_name);
	my $mark = slurp_file($mark_file);
	like($mark, qr/^\d+\n\z/, $format_name);
	chomp $mark;
	return $mark;
}

=item issue_ids_across_marks($node, $phase, $steps, $test_name)

For a node running under the fake clock at +0: move its clock forward 3 s
at a time, $steps times, and at each step insert 1000 IDs into its table
ids (id, phase).  A mark reaches 1 s of ID time ahead (MARK_WINDOW_MS in
src/generator.c), so every step passes the mark and logs a new one: checks
(after resetting the counters first) that snowflake_stats counted all the
IDs and at least $steps new marks.

=cut

sub issue_ids_across_marks
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($node, $phase, $steps, $test_name) = @_;

	$node->safe_psql('postgres', 'SELECT snowflake_stats_reset()');
	foreach my $step (1 .. $steps)
	{
		set_fake_clock($node, '+' . 3 * $step);
		$node->safe_psql('postgres',
			"INSERT INTO ids SELECT snowflake_nextval(), $phase FROM generate_series(1, 1000)");
	}
	is( $node->safe_psql(
			'postgres',
			"SELECT ids_issued, marks_written >= $steps FROM snowflake_stats"),
		1000 * $steps . '|t',
		$test_name);
	return;
}

=item issue_until_lifetime_end($node)

For a node whose clock is a few seconds before the end of its layout's
lifetime: in one statement, draw IDs in batches of 10000 until
snowflake_nextval() refuses, at most 1000 batches (more than 10 s of IDs at
256 per millisecond), and record in a new table C<run> one row: the
C<batches> drawn, the C<first_id> and C<last_id> drawn, whether every batch
was C<good> (10000 distinct positive IDs, all above every earlier one), and
the C<sqlstate> and C<message> of the error that ended the loop (NULL if
none did).

=cut

sub issue_until_lifetime_end
{
	my ($node) = @_;

	$node->safe_psql('postgres', q{
		CREATE TABLE run (batches int, first_id bigint, last_id bigint,
						  good boolean, sqlstate text, message text);
		DO $$
		DECLARE
			batches int := 0;
			first_id bigint;
			last_id bigint := 0;
			good boolean := true;
			lo bigint;
			hi bigint;
			n bigint;
		BEGIN
			BEGIN
				WHILE batches < 1000 LOOP
					SELECT min(id), max(id), count(DISTINCT id) INTO lo, hi, n
					FROM snowflake_nextval(10000) AS id;
					good := good AND n = 10000 AND lo > last_id AND hi > 0;
					first_id := coalesce(first_id, lo);
					last_id := hi;
					batches := batches + 1;
				END LOOP;
				INSERT INTO run VALUES (batches, first_id, last_id, good, NULL, NULL);
			EXCEPTION WHEN OTHERS THEN
				INSERT INTO run VALUES (batches, first_id, last_id, good, SQLSTATE, SQLERRM);
			END;
		END
		$$;
	});
	return;
}

=back

=head2 Worker-id leases

A registry node and servers that lease their worker ids from it
(snowflake.registry).  Each server keeps the IDs it issues in its table
C<ids (id, phase)>; C<collect_ids> copies them to the registry's table
C<ids (server, worker, id)>, where the checks compare every server's IDs
in SQL.

=over

=item registry_node($name)

Make and start a registry: a node that does not preload the library (a
registry needs only the extension's SQL), with the extension created in
database postgres; a role C<fleet> that may log in and execute the three
lease functions, and nothing more; and the table C<ids (server, worker, id)>
for the IDs the test collects.

=cut

sub registry_node
{
	my ($name) = @_;
	my $node = snowflake_node($name, preload => 0);

	$node->start;
	$node->safe_psql(
		'postgres', q{
		CREATE EXTENSION snowflake;
		CREATE ROLE fleet LOGIN;
		GRANT EXECUTE ON FUNCTION snowflake.lease_claim, snowflake.lease_renew,
		    snowflake.lease_release TO fleet;
		CREATE TABLE ids (server text NOT NULL, worker int NOT NULL, id bigint NOT NULL);
	});
	return $node;
}

=item registry_conninfo($registry [, $user [, $dbname]])

The connection string of the registry's database $dbname (default
postgres) as $user (default C<fleet>), with no quotes in it, so that it
fits in a postgresql.conf value.

=cut

sub registry_conninfo
{
	my ($registry, $user, $dbname) = @_;
	return sprintf('host=%s port=%d dbname=%s user=%s',
		$registry->host, $registry->port, $dbname // 'postgres', $user // 'fleet');
}

=item lease_node($name, $registry, %options)

C<snowflake_node> (same options) for a server that leases its worker id from
$registry as C<fleet>, with snowflake.lease_time 2 s, so that leases lapse
quickly, and snowflake.max_wait 10 s, so that a call at the ceiling waits
for a renewal that a loaded machine delays rather than fail; C<conf> adds
to or overrides these.  Not started.

A lease of 2 s lapses whenever the keeper cannot renew it for 2 s, which a
loaded machine can cause: where a test counts on a lease not lapsing (a
second server must be refused), the holder needs a longer lease, and
C<shorten_lease> before it crashes if the test then waits for the lapse.

=cut

sub lease_node
{
	my ($name, $registry, %options) = @_;
	my %conf = (
		'snowflake.registry' => registry_conninfo($registry),
		'snowflake.lease_time' => '2s',
		'snowflake.max_wait' => '10s',
		%{ $options{conf} // {} });

	return snowflake_node($name, %options, conf => \%conf);
}

=item add_ids_table($node)

Create the extension and the table C<ids (id, phase)> on a running node.

=cut

sub add_ids_table
{
	my ($node) = @_;
	$node->safe_psql(
		'postgres', q{
		CREATE EXTENSION snowflake;
		CREATE TABLE ids (id bigint NOT NULL, phase int NOT NULL);
	});
	return;
}

=item issue_ids($node, $phase, $count)

Insert $count new IDs into the node's table ids as phase $phase.

=cut

sub issue_ids
{
	my ($node, $phase, $count) = @_;
	$node->safe_psql('postgres',
		"INSERT INTO ids SELECT snowflake_nextval(), $phase FROM generate_series(1, $count)");
	return;
}

=item wait_for_lease($node, $state [, $error_pattern])

Wait until the node's snowflake_stats shows lease_state $state (any state if
undef) and, if given, a lease_error that matches the POSIX regular
expression $error_pattern; dies saying what it waited for and what it saw
last.

=cut

sub wait_for_lease
{
	my ($node, $state, $error_pattern) = @_;
	my @conditions;

	push @conditions, "lease_state = '$state'" if defined $state;
	push @conditions, "lease_error ~ '" . ($error_pattern =~ s/'/''/gr) . "'"
	  if defined $error_pattern;
	return
	  if $node->poll_query_until('postgres',
		'SELECT ' . join(' AND ', @conditions) . ' FROM snowflake_stats');
	die sprintf(
		"timed out waiting on node %s for %s; it shows: %s",
		$node->name,
		join(' and ',
			(defined $state ? "lease_state '$state'" : ()),
			(defined $error_pattern ? "lease_error ~ '$error_pattern'" : ())),
		$node->safe_psql('postgres',
			'SELECT lease_state, worker_id, lease_error FROM snowflake_stats'));
}

=item lease_row($registry, $worker_id, $columns)

Those columns of the registry's row for $worker_id (database postgres), as
psql prints them.

=cut

sub lease_row
{
	my ($registry, $worker_id, $columns) = @_;
	return $registry->safe_psql('postgres',
		"SELECT $columns FROM snowflake.workers WHERE worker_id = $worker_id");
}

=item shorten_lease($node, $registry)

Reload the node with snowflake.lease_time 2 s and wait until the registry
shows its lease renewed with it (lapsing within 5 s), so that after a
crash the lease lapses quickly.

=cut

sub shorten_lease
{
	my ($node, $registry) = @_;
	my $worker = lease_stats($node, 'worker_id');

	reload_snowflake_conf($node, 'snowflake.lease_time' => 2000);
	$registry->poll_query_until('postgres',
		"SELECT lease_expires < now() + interval '5 s' FROM snowflake.workers WHERE worker_id = $worker"
	)
	  or die sprintf(
		'timed out waiting for %s to renew its lease of worker id %s for 2 s',
		$node->name, $worker);
	return;
}

=item lease_stats($node, $columns)

Those columns of the node's snowflake_stats, as psql prints them.

=cut

sub lease_stats
{
	my ($node, $columns) = @_;
	return $node->safe_psql('postgres', "SELECT $columns FROM snowflake_stats");
}

=item keeper_pid($node)

The process id of the node's lease keeper; dies if there is none.

=cut

sub keeper_pid
{
	my ($node) = @_;
	my $pid = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'snowflake lease keeper'");

	die 'node ' . $node->name . ' has no lease keeper' unless $pid =~ /^\d+$/;
	return $pid;
}

=item collect_ids($node, $registry [, $server [, $where]])

Copy the IDs of the node's table ids (those that match the SQL condition
$where, if given) to the registry's table ids as server $server (default:
the node's name), each with the worker id it carries (by the node's
layout).  Returns how many were copied.

=cut

sub collect_ids
{
	my ($node, $registry, $server, $where) = @_;
	$server //= $node->name;
	$where //= 'true';
	my $rows = $node->safe_psql('postgres',
		"COPY (SELECT '$server', (snowflake_parse(id)).worker_id, id FROM ids WHERE $where) TO STDOUT");
	my $count = () = $rows =~ /^./mg;

	$registry->safe_psql('postgres', "COPY ids FROM STDIN;\n$rows\n\\.\n")
	  if $count > 0;
	return $count;
}

=item check_no_duplicates($registry, $test_name)

Check that the IDs collected in the registry's table ids are not empty and
that none repeats.

=cut

sub check_no_duplicates
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($registry, $test_name) = @_;

	is( $registry->safe_psql(
			'postgres', 'SELECT count(*) > 0, count(*) - count(DISTINCT id) FROM ids'),
		't|0',
		$test_name);
	return;
}

=item check_fenced($registry, $earlier, $later, $worker, $test_name)

Among the IDs collected in the registry, check that servers $earlier and
$later both issued IDs under worker id $worker, and that every one of
$later's is above every one of $earlier's.

=cut

sub check_fenced
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($registry, $earlier, $later, $worker, $test_name) = @_;

	is( $registry->safe_psql(
			'postgres', qq{
		SELECT count(*) FILTER (WHERE server = '$earlier') > 0,
		       count(*) FILTER (WHERE server = '$later') > 0,
		       max(id) FILTER (WHERE server = '$earlier')
		         < min(id) FILTER (WHERE server = '$later')
		  FROM ids WHERE worker = $worker}),
		't|t|t',
		$test_name);
	return;
}

=item check_twin_refused($twin, $holder, $worker)

For a server $twin configured with worker id $worker, which the running
server $holder leases: wait until the twin's claim is refused; check that
its lease_error names the holder (system identifier and cluster name) and
that snowflake_nextval() fails saying why; then wait until it was refused
three times and check that it holds no worker id and issued no ID.

=cut

sub check_twin_refused
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($twin, $holder, $worker) = @_;
	my ($name, $holder_name) = ($twin->name, $holder->name);
	my $sysid = $holder->safe_psql('postgres',
		'SELECT system_identifier FROM pg_control_system()');

	wait_for_lease($twin, 'refused',
		"snowflake worker id $worker is held by another server");
	like(
		lease_stats($twin, 'lease_error'),
		qr/the registry refused: snowflake worker id $worker is held by another server\. Worker id $worker is leased by database system $sysid \(host "$holder_name"\) until /,
		"$name: lease_error names $holder_name");
	my $err = psql_fails_like($twin, 'SELECT snowflake_nextval()',
		qr/ERROR:  this server has no snowflake worker id yet/,
		"$name, configured with the worker id $holder_name holds");
	like($err, qr/DETAIL:  .*snowflake worker id $worker is held by another server/,
		"$name: the error says why");
	# the keeper keeps asking, and is refused every time
	$twin->poll_query_until('postgres', 'SELECT lease_failures >= 3 FROM snowflake_stats')
	  or die "timed out waiting for $name to be refused three times";
	is( lease_stats(
			$twin, 'lease_state, worker_id IS NULL, ids_issued, lease_ceiling IS NULL'),
		'refused|t|0|t',
		"$name generated nothing while $holder_name held worker id $worker");
	return;
}

=back

=head2 Client programs

The client tests (t/21x) run real programs (node, python3, ruby) against a
node.

=over

=item first_program(\@candidates, @arguments)

The first of @candidates (undef entries are skipped) that runs with
@arguments and exits with status 0, or undef if none does.  For example
C<first_program([ $ENV{PYTHON}, 'python3' ], '-c', 'import django')>.

=cut

sub first_program
{
	my ($candidates, @arguments) = @_;

	foreach my $candidate (grep { defined } @$candidates)
	{
		my ($ok) = run_program(undef, {}, $candidate, @arguments);
		return $candidate if $ok;
	}
	return undef;
}

=item copy_tree($from, $to)

Copy the files under directory $from into directory $to (created as
needed), keeping the layout.

=cut

sub copy_tree
{
	my ($from, $to) = @_;

	File::Find::find(
		{
			no_chdir => 1,
			wanted => sub {
				my $target = $to . substr($File::Find::name, length $from);
				if (-d $File::Find::name)
				{
					File::Path::make_path($target);
				}
				else
				{
					File::Copy::copy($File::Find::name, $target)
					  or die "could not copy $File::Find::name to $target: $!";
				}
			}
		},
		$from);
	return;
}

=item run_program($dir, \%env, @command)

Run @command in directory $dir (undef: the current one) with the
environment variables of %env added, and a timeout.  Returns a list: true
if it exited with status 0, its stdout, its stderr.

=cut

sub run_program
{
	my ($dir, $env, @command) = @_;
	my ($out, $err) = ('', '');
	local @ENV{ keys %$env } = values %$env;
	my $ok = eval {
		IPC::Run::run(
			\@command, '>', \$out, '2>', \$err,
			(defined $dir ? (init => sub { chdir $dir or die "could not enter $dir: $!" }) : ()),
			IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	};
	$err .= $@ if $@;
	return ($ok, $out, $err);
}

=back

=head2 Scenarios

=over

=item clock_behind_restart_scenario($stop_mode)

The scenario of t/101 (clean restart) and t/102 (crash).  Issue IDs, stop
the node with $stop_mode ("fast" or "immediate"), and start it with the clock
10 minutes behind.  With
snowflake.max_drift raised to allow it, every new ID is larger than every
earlier one, drift_ms shows the 10 minutes and the log is clean; with the
default max_drift, snowflake_nextval() refuses with a clear error and no ID
is issued; back at the real time, IDs are issued again, all larger than
before.

=cut

sub clock_behind_restart_scenario
{
	my ($mode) = @_;
	my $node = snowflake_node("clock_behind_$mode", worker_id => 1);
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
	set_snowflake_conf($node, 'snowflake.max_drift' => 700000);
	$node->stop($mode);
	my $log_offset = -s $node->logfile;
	start_with_fake_clock($node, '-600');
	clock_offset_ok($node, -600, "after $mode stop: the server's clock is 10 minutes behind");

	issue_above($node, 2, 1000, $max1,
		"after $mode stop, clock 10 min behind: every new ID is larger than every earlier one");
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
	set_snowflake_conf($node);
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
	issue_above($node, 4, 1000, $max2,
		'back at the real time: IDs are issued again, all larger than before');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM ids'),
		'3000', 'all three phases issued their IDs');

	$node->stop;
	return;
}

=item active_active_workload($nodes, $seconds, $clients)

For an active-active mesh: run pgbench on every node of @$nodes at the same
time, $clients clients each for $seconds seconds, each transaction inserting
one row into the table C<events (id, node)> with node = the node's index
(1, 2, ...) and the id from its default.  Checks that no run reported an
error or a failed transaction and that each node holds one row of its own
per transaction.  Returns the number of rows inserted on all nodes.

=cut

sub active_active_workload
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($nodes, $seconds, $clients) = @_;
	my @runs;
	my $total = 0;

	for my $n (1 .. @$nodes)
	{
		push @runs,
		  start_pgbench($nodes->[ $n - 1 ],
			"INSERT INTO events (node) VALUES ($n);\n",
			'-c', $clients, '-j', $clients, '-T', $seconds);
	}
	for my $n (1 .. @$nodes)
	{
		my $bench = finish_pgbench($runs[ $n - 1 ]);
		my $name = $nodes->[ $n - 1 ]->name;

		is($bench->{exit}, 0, "$name: pgbench exits with status 0");
		is($bench->{stderr}, '', "$name: pgbench reports no errors");
		is($bench->{failed} // 0, 0, "$name: no failed transaction");
		cmp_ok($bench->{processed} // 0, '>', 0, "$name: rows were inserted");
		is( $nodes->[ $n - 1 ]
			  ->safe_psql('postgres', "SELECT count(*) FROM events WHERE node = $n"),
			$bench->{processed} // -1,
			"$name: one row of its own per transaction");
		$total += $bench->{processed} // 0;
	}
	note "rows inserted on all nodes together: $total";
	return $total;
}

=item active_active_converged($nodes, $total, $worker_ids)

Wait until every node of @$nodes holds $total rows in C<events>, then check
that all hold the same rows (count and an md5 over every id and node, in ID
order), that no ID appears twice, and that each row's ID carries the worker
id of the node that inserted it ($worker_ids->[node - 1]).

=cut

sub active_active_converged
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($nodes, $total, $worker_ids) = @_;
	my $digest_sql = q{
		SELECT count(*), count(DISTINCT id),
		       md5(string_agg(id::text || ':' || node, ',' ORDER BY id))
		  FROM events};
	my $cases = join(' ',
		map { "WHEN $_ THEN $worker_ids->[$_ - 1]" } 1 .. @$worker_ids);
	my @digests;

	foreach my $node (@$nodes)
	{
		my $name = $node->name;

		ok( $node->poll_query_until(
				'postgres', "SELECT count(*) >= $total FROM events"),
			"$name: every row arrived")
		  or diag $node->safe_psql('postgres', 'SELECT node, count(*) FROM events GROUP BY node ORDER BY node');
		push @digests, $node->safe_psql('postgres', $digest_sql);
		note "$name: count, distinct IDs, md5: $digests[-1]";
		like($digests[-1], qr/^$total\|$total\|[0-9a-f]{32}$/,
			"$name: $total rows, no ID twice");
		is( $node->safe_psql(
				'postgres', qq{
				SELECT count(*) FROM events e, snowflake_parse(e.id) p
				 WHERE p.worker_id <> CASE e.node $cases END}),
			'0',
			"$name: every ID carries the worker id of the node that inserted it");
	}
	is_deeply([ @digests[ 1 .. $#digests ] ],
		[ ($digests[0]) x $#digests ],
		'every node holds the same rows (count and md5 of the IDs in order)');
	return;
}

=back

=cut

1;
