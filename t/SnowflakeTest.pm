
# Copyright (c) 2026, snowflake contributors

=pod

=head1 NAME

SnowflakeTest - helpers shared by the snowflake TAP tests

=head1 SYNOPSIS

  use lib 't';
  use SnowflakeTest;

  my $node = snowflake_node('main', 'snowflake.worker_id' => 1);
  $node->start;
  $node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

=head1 DESCRIPTION

Every test needs a node that preloads snowflake, a way to check that a
statement fails with a given message, a pgbench run whose output it can
read, and a check that IDs strictly increase in some order.  Those live
here; everything that is specific to one test stays in the test.

=cut

package SnowflakeTest;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use File::Temp;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT = qw(
  snowflake_node
  set_snowflake_conf
  psql_fails_like
  run_pgbench
  check_strictly_increasing
  check_no_crash
);

=pod

=over

=item snowflake_node($name, %settings)

Initialize (but do not start) a node.  It preloads snowflake unless
C<preload =E<gt> 0> is given; every other pair becomes a line of
postgresql.conf (values are quoted).  TimeZone is pinned to UTC, parallel
query is off so that "one statement" means "one process", and
postgresql.conf includes F<snowflake_test.conf>, which
C<set_snowflake_conf> rewrites to change settings between restarts.

=cut

sub snowflake_node
{
	my ($name, %settings) = @_;
	my $preload = exists $settings{preload} ? delete $settings{preload} : 1;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init;

	my $conf = "TimeZone = 'UTC'\n"
	  . "max_parallel_workers_per_gather = 0\n";
	$conf .= "shared_preload_libraries = 'snowflake'\n" if $preload;
	$conf .= "$_ = '$settings{$_}'\n" for sort keys %settings;
	$conf .= "include_if_exists = 'snowflake_test.conf'\n";
	$node->append_conf('postgresql.conf', $conf);

	return $node;
}

=pod

=item set_snowflake_conf($node, %settings)

Replace the contents of the node's F<snowflake_test.conf> (included last by
postgresql.conf, so it wins) with the given settings.  Takes effect at the
next restart or reload.

=cut

sub set_snowflake_conf
{
	my ($node, %settings) = @_;
	my $file = $node->data_dir . '/snowflake_test.conf';

	open my $fh, '>', $file or die "could not write $file: $!";
	print $fh "$_ = '$settings{$_}'\n" for sort keys %settings;
	close $fh or die "could not close $file: $!";
	return;
}

=pod

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

=pod

=item run_pgbench($node, $script, @options)

Run pgbench against the node's postgres database with $script as its only
custom script (and C<-n>, so it needs no pgbench tables), plus @options.
Returns a hash reference with C<exit> (the exit status), C<stdout>,
C<stderr>, and, parsed from stdout, C<processed> (transactions actually
processed) and C<failed> (failed transactions; undef if not reported).

=cut

sub run_pgbench
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
	my ($stdout, $stderr) = ('', '');

	note "running: @cmd";
	IPC::Run::run(\@cmd, '>', \$stdout, '2>', \$stderr);
	my %result = (exit => $? >> 8, stdout => $stdout, stderr => $stderr);
	note "pgbench stdout:\n$stdout";
	note "pgbench stderr:\n$stderr" if $stderr ne '';

	$result{processed} = $1
	  if $stdout =~ /number of transactions actually processed: (\d+)/;
	$result{failed} = $1
	  if $stdout =~ /number of failed transactions: (\d+)/;
	return \%result;
}

=pod

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

=pod

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

=pod

=back

=cut

1;
