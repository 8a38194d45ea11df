# Copyright (c) 2026, snowflake contributors

# Citus: a coordinator and two workers, each its own server that preloads
# citus and snowflake (citus first, as Citus requires) with its own worker
# id: coordinator 1, worker1 2, worker2 3.  The coordinator holds no shards,
# so the node that stores a row and the node that generated its ID can be
# told apart.  The registry table is made a Citus reference table, so every
# node sees every registration.
#
# Rows reach the distributed table events (DEFAULT snowflake_nextval(),
# distributed by tenant) in every way Citus offers, each shape marked in the
# column "shape": INSERT ... VALUES (one row, many rows, prepared) and COPY
# through the coordinator; INSERT ... SELECT from a co-located distributed
# table, with a repartition, with a LIMIT, over a UNION, from a reference
# table (also with round-robin task assignment); the same through the
# workers (query from any node); and a trigger on the distributed table,
# which Citus creates on every shard, that logs each row into a co-located
# table with its own snowflake_nextval() default.  For each shape:
#
#  - the worker id in each ID (snowflake_parse) is the node that
#    docs/fleet.md names for that shape: the node that received the
#    statement, or the node holding the shard the row was read from (for
#    INSERT ... SELECT: its source row carries its tenant in src_tenant), or
#    for the trigger the node holding the row's shard;
#  - each node's snowflake_stats.ids_issued grew by exactly the number of
#    rows carrying its worker id: nothing else drew an ID, so the worker ids
#    are where the IDs were made, not a coincidence of configuration (except
#    for the LIMIT, where Citus draws IDs on the shards for rows that the
#    LIMIT then drops: more drawn than stored);
#  - for each INSERT ... SELECT, EXPLAIN shows the method Citus chose.
#
# Then no ID repeats across all shards of both tables, seen from the
# coordinator and from a worker.  Last, two mistakes: a worker restarted
# with another node's worker id is refused by the registry; a worker without
# a worker id makes an INSERT ... SELECT sent to the coordinator fail, and an
# INSERT ... VALUES too while the trigger runs on that worker (no row of
# either is stored); without the trigger, INSERT ... VALUES works.
#
# Needs Citus installed for this PostgreSQL (scripts/build-citus.sh builds
# it from its release tarball); see the skip rules below.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# Citus 14, the release the team tests with, supports PostgreSQL 16 to 18.
my ($citus_min, $citus_max) = (16, 18);

# The PostgreSQL under test: the pg_config on PATH, as for the nodes.
my ($pg_version) = run_command([ 'pg_config', '--version' ]);
my ($major) = $pg_version =~ /^PostgreSQL (\d+)/
  or die "could not read the major from pg_config --version: $pg_version";
my ($sharedir) = run_command([ 'pg_config', '--sharedir' ]);
chomp $sharedir;
my $citus_control = "$sharedir/extension/citus.control";

# Skip rules.  Not installed on a major Citus does not support: skip.  Not
# installed although the test script built it (SNOWFLAKE_CITUS=1): fail.
# Otherwise skip, also under SNOWFLAKE_REQUIRE_ALL: Citus is built from a
# tarball that a clone outside the team does not have.
if (!-f $citus_control)
{
	plan skip_all =>
	  "Citus 14 supports PostgreSQL $citus_min to $citus_max, not $major"
	  if $major < $citus_min || $major > $citus_max;
	if ($ENV{SNOWFLAKE_CITUS})
	{
		fail("SNOWFLAKE_CITUS is set (the test script built Citus), but Citus is not "
			  . "installed for PostgreSQL $major ($citus_control is missing): see the "
			  . "output of scripts/build-citus.sh");
		done_testing();
		exit;
	}
	plan skip_all =>
	  "Citus is not installed for PostgreSQL $major: build and install it with "
	  . "scripts/build-citus.sh TARBALL (the team keeps the tarball at "
	  . "../shared/vendor/citus-14.0.1.tar.gz beside the repository), "
	  . "then run with SNOWFLAKE_CITUS=1";
}

# The nodes.  snowflake_node's preload option knows only snowflake, so the
# preload list comes in through conf.  max_prepared_transactions: Citus
# commits writes to several nodes (and to reference tables) with two-phase
# commit.
my %worker_id = (coordinator => 1, worker1 => 2, worker2 => 3);
my %conf = (
	shared_preload_libraries => 'citus,snowflake',
	'citus.shard_count' => 4,
	max_prepared_transactions => 10,
	shared_buffers => '16MB');
my $coordinator = snowflake_node('coordinator', preload => 0, conf => \%conf);
my $worker1 = snowflake_node('worker1', preload => 0, conf => \%conf);
my $worker2 = snowflake_node('worker2', preload => 0, conf => \%conf);
my @nodes = ($coordinator, $worker1, $worker2);
foreach my $node (@nodes)
{
	set_snowflake_conf($node, 'snowflake.worker_id' => $worker_id{ $node->name });
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
}
$coordinator->safe_psql(
	'postgres', sprintf(
		"SELECT citus_set_coordinator_host('%s', %d);\n"
		  . "SELECT citus_add_node('%s', %d);\n"
		  . "SELECT citus_add_node('%s', %d);",
		$coordinator->host, $coordinator->port,
		$worker1->host, $worker1->port,
		$worker2->host, $worker2->port));
is( $coordinator->safe_psql(
		'postgres',
		'SELECT count(*) FILTER (WHERE hasmetadata AND isactive) FROM pg_dist_node'),
	'3',
	'a coordinator and two workers, with metadata on every node (query from any node)');

# CREATE EXTENSION on the coordinator reaches the workers.
$coordinator->safe_psql('postgres', 'CREATE EXTENSION snowflake');
my $version = $coordinator->safe_psql('postgres',
	"SELECT extversion FROM pg_extension WHERE extname = 'snowflake'");
foreach my $node ($worker1, $worker2)
{
	is( $node->safe_psql(
			'postgres',
			"SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"),
		$version,
		$node->name . ': CREATE EXTENSION snowflake on the coordinator created it here');
}

# The registry as a reference table: one copy on every node, each node
# registers itself, every node sees all three.  Citus distributes a table
# with a trigger (the registry's guard) only when allowed to.
$coordinator->safe_psql('postgres',
	"SET citus.enable_unsafe_triggers = on;\n"
	  . "SELECT create_reference_table('snowflake.workers')");
foreach my $node (@nodes)
{
	$node->safe_psql('postgres',
		"SELECT snowflake_register_worker('" . $node->name . "')");
}
foreach my $node (@nodes)
{
	is( $node->safe_psql(
			'postgres', q{
			SELECT string_agg(worker_id || ':' || host, ',' ORDER BY worker_id)
			  FROM snowflake.workers;
			SELECT snowflake_check_worker()}),
		"1:coordinator,2:worker1,3:worker2\nt",
		$node->name . ': the registry (a reference table) holds all three nodes, this one included');
}

# The tables.  staging is the source of the INSERT ... SELECTs: 2000 rows,
# 100 per tenant, co-located with events; "other" is another tenant, for a
# repartition.  tenants is a reference table.
$coordinator->safe_psql(
	'postgres', q{
	CREATE TABLE events (
		id bigint NOT NULL DEFAULT snowflake_nextval(),
		tenant int NOT NULL,
		shape text NOT NULL,
		src_tenant int,
		PRIMARY KEY (tenant, id));
	SELECT create_distributed_table('events', 'tenant');
	CREATE TABLE staging (tenant int NOT NULL, other int NOT NULL);
	SELECT create_distributed_table('staging', 'tenant', colocate_with => 'events');
	INSERT INTO staging SELECT g % 20 + 1, (g * 7) % 20 + 1 FROM generate_series(1, 2000) g;
	CREATE TABLE tenants (tenant int PRIMARY KEY, name text NOT NULL);
	SELECT create_reference_table('tenants');
	INSERT INTO tenants SELECT t, 'tenant ' || t FROM generate_series(1, 20) t;
});

# home: the worker id of the node that holds each tenant's shard (of events,
# and so of staging), as a reference table for the checks.
my %worker_id_at_port = map { $_->port => $worker_id{ $_->name } } @nodes;
my @home = map { [ split /\|/ ] } split /\n/, $coordinator->safe_psql(
	'postgres', q{
	SELECT t, s.nodeport
	  FROM generate_series(1, 20) t
	  JOIN citus_shards s
	    ON s.table_name = 'events'::regclass
	   AND s.shardid = get_shard_id_for_distribution_column('events', t)
	 ORDER BY t});
is(scalar @home, 20, 'every tenant has its shard of events');
$coordinator->safe_psql('postgres',
	    "CREATE TABLE home (tenant int PRIMARY KEY, worker_id int NOT NULL);\n"
	  . "SELECT create_reference_table('home');\n"
	  . 'INSERT INTO home VALUES '
	  . join(', ', map { "($_->[0], $worker_id_at_port{$_->[1]})" } @home));
is($coordinator->safe_psql('postgres', 'SELECT string_agg(DISTINCT worker_id::text, \',\') FROM home'),
	'2,3', 'the shards are on both workers and none on the coordinator');

# The statement shapes.  "generator" is what docs/fleet.md says:
# receiver (the node the statement was sent to), source (the node holding
# the shard its source row was read from), or worker (some worker).
my @shapes = (
	{
		shape => 'values_single',
		via => $coordinator,
		generator => 'receiver',
		rows => 20,
		sql => join('',
			map { "INSERT INTO events (tenant, shape) VALUES ($_, 'values_single');\n" } 1 .. 20)
	},
	{
		shape => 'values_multi',
		via => $coordinator,
		generator => 'receiver',
		rows => 20,
		sql => 'INSERT INTO events (tenant, shape) VALUES '
		  . join(', ', map { "($_, 'values_multi')" } 1 .. 20)
	},
	{
		shape => 'values_prepared',
		via => $coordinator,
		generator => 'receiver',
		rows => 20,
		sql =>
		  "PREPARE ins(int) AS INSERT INTO events (tenant, shape) VALUES (\$1, 'values_prepared');\n"
		  . join('', map { "EXECUTE ins($_);\n" } 1 .. 20)
	},
	{
		shape => 'copy',
		via => $coordinator,
		generator => 'receiver',
		rows => 100,
		sql => "COPY events (tenant, shape) FROM STDIN;\n"
		  . join('', map { ($_ % 20 + 1) . "\tcopy\n" } 1 .. 100) . "\\.\n"
	},
	{
		shape => 'select_colocated',
		via => $coordinator,
		generator => 'source',
		method => 'repartition',
		rows => 2000,
		sql => "INSERT INTO events (tenant, shape, src_tenant)\n"
		  . "SELECT tenant, 'select_colocated', tenant FROM staging"
	},
	{
		shape => 'select_repartition',
		via => $coordinator,
		generator => 'source',
		method => 'repartition',
		rows => 2000,
		sql => "INSERT INTO events (tenant, shape, src_tenant)\n"
		  . "SELECT other, 'select_repartition', tenant FROM staging"
	},
	{
		shape => 'select_limit',
		via => $coordinator,
		generator => 'source',
		method => 'pull to coordinator',
		rows => 10,
		draws_more => 1,
		sql => "INSERT INTO events (tenant, shape, src_tenant)\n"
		  . "SELECT tenant, 'select_limit', tenant FROM staging ORDER BY tenant LIMIT 10"
	},
	{
		shape => 'select_union',
		via => $coordinator,
		generator => 'receiver',
		method => 'pull to coordinator',
		rows => 200,
		sql => "INSERT INTO events (tenant, shape, src_tenant)\n"
		  . "SELECT tenant, 'select_union', tenant FROM staging WHERE other = 1\n"
		  . "UNION ALL SELECT other, 'select_union', tenant FROM staging WHERE other = 2"
	},
	{
		shape => 'select_reference',
		via => $coordinator,
		generator => 'receiver',
		method => 'pull to coordinator',
		rows => 20,
		sql => "INSERT INTO events (tenant, shape)\n"
		  . "SELECT tenant, 'select_reference' FROM tenants"
	},
	{
		shape => 'select_reference_rr',
		via => $coordinator,
		generator => 'worker',
		rows => 80,
		sql => "SET citus.task_assignment_policy = 'round-robin';\n"
		  . "INSERT INTO events (tenant, shape) SELECT tenant, 'select_reference_rr' FROM tenants;\n"
		  x 4
	},
	{
		shape => 'worker1_values',
		via => $worker1,
		generator => 'receiver',
		rows => 30,
		sql => join('',
			map { "INSERT INTO events (tenant, shape) VALUES ($_, 'worker1_values');\n" } 1 .. 10)
		  . 'INSERT INTO events (tenant, shape) VALUES '
		  . join(', ', map { "($_, 'worker1_values')" } 1 .. 20)
	},
	{
		shape => 'worker2_copy',
		via => $worker2,
		generator => 'receiver',
		rows => 100,
		sql => "COPY events (tenant, shape) FROM STDIN;\n"
		  . join('', map { ($_ % 20 + 1) . "\tworker2_copy\n" } 1 .. 100) . "\\.\n"
	},
	{
		shape => 'worker1_select',
		via => $worker1,
		generator => 'source',
		method => 'repartition',
		rows => 2000,
		sql => "INSERT INTO events (tenant, shape, src_tenant)\n"
		  . "SELECT other, 'worker1_select', tenant FROM staging"
	},
	{
		shape => 'worker1_union',
		via => $worker1,
		generator => 'receiver',
		method => 'pull to coordinator',
		rows => 200,
		sql => "INSERT INTO events (tenant, shape, src_tenant)\n"
		  . "SELECT tenant, 'worker1_union', tenant FROM staging WHERE other = 3\n"
		  . "UNION ALL SELECT other, 'worker1_union', tenant FROM staging WHERE other = 4"
	},
	{
		shape => 'worker1_select_reference',
		via => $worker1,
		generator => 'receiver',
		method => 'pull to coordinator',
		rows => 20,
		sql => "INSERT INTO events (tenant, shape)\n"
		  . "SELECT tenant, 'worker1_select_reference' FROM tenants"
	});

# How many IDs each node has issued so far, in the order of @nodes, read
# with one psql call through Citus.
sub ids_issued
{
	my %issued = map { split /\|/ } split /\n/, $coordinator->safe_psql(
		'postgres', q{
		SELECT n.nodeport, r.result
		  FROM run_command_on_all_nodes('SELECT ids_issued FROM snowflake_stats') r
		  JOIN pg_dist_node n USING (nodeid)
		 WHERE r.success});
	return map { $issued{ $_->port } // die 'no ids_issued from ' . $_->name } @nodes;
}

# Rows per worker id of one shape, in events and event_log (once it exists).
sub rows_per_worker_id
{
	my ($shape, $with_log) = @_;
	my $ids = "SELECT id FROM events WHERE shape = '$shape'";
	$ids .= " UNION ALL SELECT id FROM event_log WHERE shape = '$shape'"
	  if $with_log;
	my %rows = map { split /\|/ } split /\n/, $coordinator->safe_psql(
		'postgres', qq{
		SELECT p.worker_id, count(*)
		  FROM ($ids) u, snowflake_parse(u.id) p
		 GROUP BY 1});
	return %rows;
}

# Each node drew exactly the IDs that the shape's rows carry with its worker
# id (at least as many, where Citus draws more than it stores).
sub drawn_ok
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($shape, $before, $after, $draws_more, $with_log) = @_;
	my %rows = rows_per_worker_id($shape, $with_log);
	my ($drawn_total, $rows_total) = (0, 0);

	foreach my $i (0 .. $#nodes)
	{
		my $name = $nodes[$i]->name;
		my $drawn = $after->[$i] - $before->[$i];
		my $rows = $rows{ $worker_id{$name} } // 0;
		($drawn_total, $rows_total) = ($drawn_total + $drawn, $rows_total + $rows);
		if ($draws_more)
		{
			cmp_ok($drawn, '>=', $rows,
				"$shape: $name drew at least the $rows IDs of worker id $worker_id{$name}");
		}
		else
		{
			is($drawn, $rows,
				"$shape: $name drew exactly the $rows IDs of worker id $worker_id{$name}");
		}
	}
	cmp_ok($drawn_total, '>', $rows_total,
		"$shape: Citus drew $drawn_total IDs for $rows_total rows")
	  if $draws_more;
	return;
}

foreach my $s (@shapes)
{
	my ($shape, $via) = ($s->{shape}, $s->{via});
	my $receiver = $worker_id{ $via->name };

	if ($s->{method})
	{
		like(
			$via->safe_psql('postgres', "EXPLAIN (COSTS OFF) $s->{sql}"),
			qr{INSERT/SELECT method: \Q$s->{method}\E\n},
			"$shape: EXPLAIN shows INSERT/SELECT method: $s->{method}");
	}

	my @before = ids_issued();
	$via->safe_psql('postgres', $s->{sql});
	my @after = ids_issued();

	my ($expected, $who) = @{
		{
			receiver => [ $receiver, $via->name . ', which received the statement' ],
			source => [ 'hs.worker_id', 'the node holding the source row' ],
			worker => [ 'CASE WHEN p.worker_id IN (2, 3) THEN p.worker_id END', 'a worker' ],
		}->{ $s->{generator} }
	};
	my ($rows, $bad) = split /\|/, $coordinator->safe_psql(
		'postgres', qq{
		SELECT count(*), count(*) FILTER (WHERE p.worker_id IS DISTINCT FROM $expected)
		  FROM events e
		  LEFT JOIN home hs ON hs.tenant = e.src_tenant
		  CROSS JOIN LATERAL snowflake_parse(e.id) p
		 WHERE e.shape = '$shape'});
	is($rows, $s->{rows}, "$shape (through " . $via->name . "): $s->{rows} rows");
	is($bad, 0, "$shape: every ID carries the worker id of $who");
	drawn_ok($shape, \@before, \@after, $s->{draws_more}, 0);
}

is( $coordinator->safe_psql(
		'postgres', q{
		SELECT string_agg(DISTINCT p.worker_id::text, ',')
		  FROM events e, snowflake_parse(e.id) p
		 WHERE e.shape = 'select_reference_rr'}),
	'2,3',
	'select_reference_rr: round-robin spreads the statements over both workers');

# A trigger on the distributed table: Citus creates it on every shard, and
# it runs on the node holding the shard.  The row it inserts into the
# co-located event_log gets its ID there.
$coordinator->safe_psql(
	'postgres', q{
	SET citus.enable_unsafe_triggers = on;
	CREATE TABLE event_log (
		id bigint NOT NULL DEFAULT snowflake_nextval(),
		tenant int NOT NULL,
		shape text NOT NULL,
		event_id bigint NOT NULL);
	SELECT create_distributed_table('event_log', 'tenant', colocate_with => 'events');
	CREATE FUNCTION log_event() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		INSERT INTO public.event_log (tenant, shape, event_id)
		VALUES (NEW.tenant, NEW.shape, NEW.id);
		RETURN NULL;
	END
	$$;
	CREATE TRIGGER log_event AFTER INSERT ON events
		FOR EACH ROW EXECUTE FUNCTION log_event();
});
is( $coordinator->safe_psql(
		'postgres', q{
		SELECT count(*) FILTER (WHERE success AND result = '1')
		  FROM run_command_on_shards('events',
		       $$SELECT count(*) FROM pg_trigger WHERE tgrelid = '%s'::regclass AND tgname LIKE 'log_event%%'$$)}),
	'4',
	'the trigger exists on each of the 4 shards of events');

my @before = ids_issued();
$coordinator->safe_psql('postgres',
	'INSERT INTO events (tenant, shape) VALUES '
	  . join(', ', map { "($_, 'trigger')" } 1 .. 20));
my @after = ids_issued();
is( $coordinator->safe_psql(
		'postgres', q{
		SELECT count(*), count(*) FILTER (WHERE p.worker_id IS DISTINCT FROM 1)
		  FROM events e, snowflake_parse(e.id) p
		 WHERE e.shape = 'trigger'}),
	'20|0',
	'trigger: the rows inserted through the coordinator carry its worker id');
is( $coordinator->safe_psql(
		'postgres', q{
		SELECT count(*), count(*) FILTER (WHERE p.worker_id IS DISTINCT FROM h.worker_id)
		  FROM event_log l
		  JOIN home h ON h.tenant = l.tenant
		  CROSS JOIN LATERAL snowflake_parse(l.id) p
		 WHERE l.shape = 'trigger'}),
	'20|0',
	'trigger: each row it logged carries the worker id of the node holding the shard');
is( $coordinator->safe_psql(
		'postgres', q{
		SELECT count(*) FROM events e JOIN event_log l ON l.tenant = e.tenant AND l.event_id = e.id}),
	'20',
	'trigger: it logged each inserted row once');
drawn_ok('trigger', \@before, \@after, 0, 1);

# No ID twice, across all shards of both tables, seen from two nodes.
my $total = 20 + 20;
$total += $_->{rows} for @shapes;
foreach my $node ($coordinator, $worker2)
{
	is( $node->safe_psql(
			'postgres', q{
			SELECT count(*), count(DISTINCT id)
			  FROM (SELECT id FROM events UNION ALL SELECT id FROM event_log) u}),
		"$total|$total",
		$node->name . ": $total rows, no ID twice");
}
is( $coordinator->safe_psql(
		'postgres', q{
		SELECT string_agg(DISTINCT p.worker_id::text, ',')
		  FROM (SELECT id FROM events UNION ALL SELECT id FROM event_log) u,
		       snowflake_parse(u.id) p}),
	'1,2,3',
	'the IDs come from all three nodes');

# Mistake 1: worker2 restarted with worker1's worker id.  The registry,
# seen from worker2, refuses it.
set_snowflake_conf($worker2, 'snowflake.worker_id' => 2);
$worker2->restart;
psql_fails_like(
	$worker2,
	'SELECT snowflake_check_worker()',
	qr/worker id 2 is registered to another server/,
	'worker2 with worker1\'s worker id: snowflake_check_worker()');
psql_fails_like(
	$worker2,
	"SELECT snowflake_register_worker('worker2')",
	qr/worker id 2 is already registered by another server/,
	'worker2 with worker1\'s worker id: snowflake_register_worker()');

# Mistake 2: worker2 without a worker id.  An INSERT ... SELECT sent to the
# coordinator needs it and fails as a whole; so does an INSERT ... VALUES
# whose row lands on worker2 while the trigger is there; without the
# trigger, INSERT ... VALUES works.
set_snowflake_conf($worker2, 'snowflake.worker_id' => -1);
$worker2->restart;
psql_fails_like(
	$coordinator,
	"INSERT INTO events (tenant, shape, src_tenant) SELECT other, 'unset_select', tenant FROM staging",
	qr/snowflake\.worker_id is not set/,
	'worker2 without a worker id: INSERT ... SELECT through the coordinator');
my ($tenant_on_worker2) =
  map { $_->[0] } grep { $worker_id_at_port{ $_->[1] } == 3 } @home;
psql_fails_like(
	$coordinator,
	"INSERT INTO events (tenant, shape) VALUES ($tenant_on_worker2, 'unset_trigger')",
	qr/snowflake\.worker_id is not set/,
	'worker2 without a worker id: INSERT ... VALUES through the coordinator, the trigger running on worker2');
$coordinator->safe_psql('postgres',
	"SET citus.enable_unsafe_triggers = on;\nDROP TRIGGER log_event ON events");
$coordinator->safe_psql('postgres',
	"INSERT INTO events (tenant, shape) VALUES ($tenant_on_worker2, 'unset_values')");
is( $coordinator->safe_psql(
		'postgres', q{
		SELECT string_agg(shape || ':' || p.worker_id, ',')
		  FROM events e, snowflake_parse(e.id) p
		 WHERE shape LIKE 'unset%'}),
	'unset_values:1',
	'worker2 without a worker id: no row of the failed statements is stored; without the trigger, INSERT ... VALUES through the coordinator works');

check_no_crash($_, $_->name) for @nodes;
$_->stop for @nodes;
done_testing();
