# Copyright (c) 2026, snowflake contributors

# Active-active with built-in logical replication: three nodes with worker
# ids 11, 12 and 13 insert into the same table, whose primary key defaults to
# snowflake_nextval(), all at once under pgbench, and each subscribes to the
# other two's publication with origin = none (PostgreSQL 16 and later), so
# that no node passes on rows it received.  Afterwards every node holds the
# same rows, no ID repeats, and neither pg_stat_subscription_stats nor the
# logs show a conflict or an apply error.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $seconds = $ENV{SNOWFLAKE_MESH_SECONDS} // 10;
my @worker_ids = (11, 12, 13);

# Not a missing dependency: the subscription option does not exist before 16.
my $version = PostgreSQL::Test::Cluster->new('version')->pg_version;
plan skip_all =>
  "the subscription option origin = none needs PostgreSQL 16 or later (this is $version)"
  if $version < 16;

my $nodes = [];
for my $n (1 .. 3)
{
	push @$nodes,
	  snowflake_node(
		"node$n",
		worker_id => $worker_ids[ $n - 1 ],
		init => { allows_streaming => 'logical' },
		conf => { shared_buffers => '16MB' });
}

for my $n (1 .. 3)
{
	my $node = $nodes->[ $n - 1 ];

	$node->start;
	$node->safe_psql(
		'postgres', q{
		CREATE EXTENSION snowflake;
		CREATE TABLE events (
			id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
			node int NOT NULL);
		CREATE PUBLICATION mesh FOR TABLE events;
	});
}

# The full mesh: each node subscribes to the two others.  The tables are
# empty: nothing to copy.  An apply error would disable the subscription
# rather than retry, so that the checks below see it.
for my $n (1 .. 3)
{
	for my $m (grep { $_ != $n } 1 .. 3)
	{
		my $connstr = $nodes->[ $m - 1 ]->connstr . ' dbname=postgres';
		$nodes->[ $n - 1 ]->safe_psql('postgres',
			"CREATE SUBSCRIPTION node${n}_from_node$m CONNECTION '$connstr' PUBLICATION mesh "
			  . 'WITH (origin = none, copy_data = false, disable_on_error = true)');
	}
}

# CREATE SUBSCRIPTION made the slots, so the publishers keep every change from
# now on; wait until the apply workers run all the same.
foreach my $node (@$nodes)
{
	ok( $node->poll_query_until(
			'postgres', q{
			SELECT count(*) = 2 FROM pg_stat_subscription
			 WHERE pid IS NOT NULL AND relid IS NULL}),
		$node->name . ': both apply workers run');
}
my @log_offsets = map { -s $_->logfile } @$nodes;

my $total = active_active_workload($nodes, $seconds, 2);
active_active_converged($nodes, $total, \@worker_ids);

for my $n (1 .. 3)
{
	my $node = $nodes->[ $n - 1 ];
	my $name = $node->name;
	my @subs = map { "node${n}_from_node$_" } grep { $_ != $n } 1 .. 3;

	# pg_stat_subscription_stats counts apply and sync errors (16+; 19 splits
	# sync_error_count into one for tables and one for sequences) and, from
	# 18, each kind of conflict in a confl_* column: add up whichever exist.
	my ($error_columns, $conflict_columns) = split /\|/,
	  $node->safe_psql(
		'postgres', q{
		SELECT coalesce(string_agg(attname, ' + ' ORDER BY attnum)
		                  FILTER (WHERE attname LIKE '%error\_count'), '0'),
		       coalesce(string_agg(attname, ' + ' ORDER BY attnum)
		                  FILTER (WHERE attname LIKE 'confl\_%'), '0')
		  FROM pg_attribute
		 WHERE attrelid = 'pg_stat_subscription_stats'::regclass AND attnum > 0});
	note "$name: error counters: $error_columns; conflict counters: $conflict_columns";
	like($error_columns, qr/\bapply_error_count\b.*\bsync_\w*error_count\b/,
		"$name: the apply and sync error counters are among them");
	is( $node->safe_psql(
			'postgres', qq{
			SELECT string_agg(subname || ':' || ($error_columns) || '/' || ($conflict_columns),
			                  ',' ORDER BY subname)
			  FROM pg_stat_subscription_stats}),
		join(',', map { "$_:0/0" } @subs),
		"$name: pg_stat_subscription_stats: no apply or sync error, no conflict");
	is( $node->safe_psql(
			'postgres',
			q{SELECT string_agg(subname || ':' || subenabled, ',' ORDER BY subname) FROM pg_subscription}),
		join(',', map { "$_:true" } @subs),
		"$name: both subscriptions still enabled");

	# From 18 the apply worker also logs each conflict ("conflict detected
	# on relation ..."); an apply error is an ERROR in any version.
	my $log = slurp_file($node->logfile, $log_offsets[ $n - 1 ]);
	my @conflicts = $log =~ /(conflict detected .*)/g;
	my @errors = $log =~ /((?:ERROR|FATAL|PANIC):  .*)/g;
	is(scalar @conflicts, 0, "$name: no conflict in the log")
	  or diag join("\n", @conflicts[ 0 .. ($#conflicts < 4 ? $#conflicts : 4) ]);
	is(scalar @errors, 0, "$name: no error in the log")
	  or diag join("\n", @errors[ 0 .. ($#errors < 4 ? $#errors : 4) ]);
	check_no_crash($node, $name);
}

$_->stop for @$nodes;
done_testing();
