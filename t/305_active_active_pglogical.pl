# Copyright (c) 2026, snowflake contributors

# Active-active with pglogical: three nodes with worker ids 11, 12 and 13
# insert into the same table, whose primary key defaults to
# snowflake_nextval(), all at once under pgbench, and each subscribes to the
# other two (a full mesh, forward_origins := '{}' so that no node passes on
# rows it received).  Afterwards every node holds the same rows, no ID
# repeats, and no node logged a conflict or an apply error.

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

my $nodes = [];
for my $n (1 .. 3)
{
	my $node = snowflake_node(
		"node$n",
		preload => 0,
		worker_id => $worker_ids[ $n - 1 ],
		init => { allows_streaming => 'logical' },
		conf => {
			shared_preload_libraries => 'pglogical, snowflake',
			shared_buffers => '16MB',
			max_worker_processes => 16,
		});
	push @$nodes, $node;
}

need_package('postgresql-@PG@-pglogical',
	-e $nodes->[0]->config_data('--pkglibdir') . '/pglogical.so',
	'pglogical is not installed');

for my $n (1 .. 3)
{
	my $node = $nodes->[ $n - 1 ];

	$node->start;

	# Since 15.19 (and the matching minor releases of later majors) a
	# walsender only loads the output plugins that output_plugin_libraries
	# lists, pgoutput and test_decoding by default; pglogical's provider side
	# is the output plugin pglogical_output.  Older servers lack the setting.
	if ($node->safe_psql('postgres',
			"SELECT count(*) FROM pg_settings WHERE name = 'output_plugin_libraries'") eq '1')
	{
		$node->safe_psql('postgres',
			"ALTER SYSTEM SET output_plugin_libraries = pgoutput, test_decoding, pglogical_output");
		$node->reload;
	}

	my $dsn = $node->connstr('postgres');
	$node->safe_psql(
		'postgres', qq{
		CREATE EXTENSION snowflake;
		CREATE EXTENSION pglogical;
		CREATE TABLE events (
			id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
			node int NOT NULL);
		SELECT pglogical.create_node(node_name := 'node$n', dsn := \$\$$dsn\$\$);
		SELECT pglogical.replication_set_add_table('default', 'events');
	});
}

# The full mesh: each node subscribes to the two others.  The tables are
# empty and already exist everywhere: no structure or data to copy.
for my $n (1 .. 3)
{
	for my $m (grep { $_ != $n } 1 .. 3)
	{
		my $dsn = $nodes->[ $m - 1 ]->connstr('postgres');
		$nodes->[ $n - 1 ]->safe_psql(
			'postgres', qq{
			SELECT pglogical.create_subscription(
				subscription_name := 'node${n}_from_node$m',
				provider_dsn := \$\$$dsn\$\$,
				replication_sets := '{default}',
				synchronize_structure := false,
				synchronize_data := false,
				forward_origins := '{}')});
	}
}

# Rows inserted before a subscription's slot exists would never reach it:
# wait until every subscription replicates.
foreach my $node (@$nodes)
{
	ok( $node->poll_query_until(
			'postgres', q{
			SELECT count(*) = 2 AND bool_and(status = 'replicating')
			  FROM pglogical.show_subscription_status()}),
		$node->name . ': both subscriptions are replicating')
	  or diag $node->safe_psql('postgres',
		'SELECT subscription_name, status FROM pglogical.show_subscription_status()');
}
my @log_offsets = map { -s $_->logfile } @$nodes;

my $total = active_active_workload($nodes, $seconds, 2);
active_active_converged($nodes, $total, \@worker_ids);

# pglogical resolves a conflict (a remote insert whose key exists, say) by
# its pglogical.conflict_resolution and logs it as "CONFLICT: remote INSERT
# on relation ..."; an apply error stops the apply worker, which logs it and
# restarts.  Neither may have happened, and every subscription still runs.
for my $n (1 .. 3)
{
	my $node = $nodes->[ $n - 1 ];
	my $name = $node->name;
	my $log = slurp_file($node->logfile, $log_offsets[ $n - 1 ]);
	my @conflicts = $log =~ /(CONFLICT: .*)/g;
	my @errors = $log =~ /((?:ERROR|FATAL|PANIC):  .*)/g;

	is(scalar @conflicts, 0, "$name: pglogical logged no conflict")
	  or diag join("\n", @conflicts[ 0 .. ($#conflicts < 4 ? $#conflicts : 4) ]);
	is(scalar @errors, 0, "$name: no error in the log")
	  or diag join("\n", @errors[ 0 .. ($#errors < 4 ? $#errors : 4) ]);
	is( $node->safe_psql(
			'postgres', q{
			SELECT string_agg(subscription_name || ':' || status, ',' ORDER BY subscription_name)
			  FROM pglogical.show_subscription_status()}),
		join(',',
			map { "node${n}_from_node$_:replicating" } grep { $_ != $n } 1 .. 3),
		"$name: both subscriptions still replicating");
	check_no_crash($node, $name);
}

$_->stop for @$nodes;
done_testing();
