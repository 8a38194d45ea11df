# Copyright (c) 2026, snowflake contributors

# Updating a fleet whose registry replicates.  Servers A and B run version
# 1.2, each publishing its registry (public.snowflake_workers) and
# subscribing to the other's, as docs/fleet.md describes.  Version 1.3
# moves the table to snowflake.workers.
#
#  1. A is updated while the registry is quiet: the table keeps its rows,
#     its place in the publication, its pg_dump registration, its replica
#     identity, its privileges and its ENABLE ALWAYS guard, and the
#     functions follow it.
#  2. Changes made while only one side is updated cannot be applied:
#     logical replication finds tables by name.  A row written on the
#     updated A stops B's subscription until B is updated too; then
#     enabling the subscription again applies it.  A row written on B
#     before B's update carries the old name in B's WAL, so A can never
#     apply it: A skips that transaction and the row is copied by hand.
#  3. Afterwards the mesh replicates and guards as before.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

sub registry
{
	my ($node, $table) = @_;
	$table //= 'snowflake.workers';
	return $node->safe_psql('postgres',
		"SELECT string_agg(worker_id || '=' || host, ',' ORDER BY worker_id) FROM $table"
	);
}

sub wait_disabled
{
	my ($node, $subname) = @_;
	$node->poll_query_until('postgres',
		"SELECT NOT subenabled FROM pg_subscription WHERE subname = '$subname'")
	  or die "$subname was not disabled";
	return;
}

my %node;
for ([ 'a', 1 ], [ 'b', 2 ])
{
	my ($name, $worker_id) = @$_;
	my $node = snowflake_node(
		$name,
		worker_id => $worker_id,
		init => { allows_streaming => 'logical' });
	$node->start;
	$node->safe_psql(
		'postgres', q{
		CREATE EXTENSION snowflake VERSION '1.2';
		CREATE PUBLICATION registry FOR TABLE snowflake_workers;
	});
	$node{$name} = $node;
}
my ($node_a, $node_b) = @node{ 'a', 'b' };
subscribe_registries($node_a, $node_b);

$node_a->safe_psql('postgres', "SELECT snowflake_register_worker('node-a')");
$node_b->safe_psql('postgres', "SELECT snowflake_register_worker('node-b')");
$node_a->wait_for_catchup('reg_from_a');
$node_b->wait_for_catchup('reg_from_b');
$node_a->wait_for_catchup('reg_from_a');
is(registry($node_a, 'snowflake_workers'), '1=node-a,2=node-b', '1.2: A has both rows');
is(registry($node_b, 'snowflake_workers'), '1=node-a,2=node-b', '1.2: B has both rows');

#
# 1. Update A while the registry is quiet.
#
$node_a->safe_psql('postgres', 'ALTER EXTENSION snowflake UPDATE');
is( $node_a->safe_psql(
		'postgres', q{
		SELECT extversion = (SELECT default_version FROM pg_available_extensions
		                      WHERE name = 'snowflake'),
		       to_regclass('public.snowflake_workers') IS NULL
		  FROM pg_extension WHERE extname = 'snowflake'}),
	't|t',
	'A: updated (through 1.3) to the current version, and the application schema has no registry table');
is(registry($node_a), '1=node-a,2=node-b', 'A: snowflake.workers kept the rows');
is( $node_a->safe_psql(
		'postgres',
		"SELECT string_agg(schemaname || '.' || tablename, ',') FROM pg_publication_tables WHERE pubname = 'registry'"
	),
	'snowflake.workers',
	'A: the publication names the moved table');
is( $node_a->safe_psql(
		'postgres',
		"SELECT extconfig::regclass[]::text FROM pg_extension WHERE extname = 'snowflake'"),
	'{snowflake.workers}',
	'A: pg_dump still treats it as a configuration table');
is( $node_a->safe_psql(
		'postgres', q{
		SELECT c.relreplident, i.indexrelid::regclass, t.tgname, t.tgenabled
		  FROM pg_class c
		  JOIN pg_index i ON i.indrelid = c.oid AND i.indisreplident
		  JOIN pg_trigger t ON t.tgrelid = c.oid AND NOT t.tgisinternal
		 WHERE c.oid = 'snowflake.workers'::regclass}),
	'i|snowflake.workers_worker_system_key|workers_guard|A',
	'A: replica identity (worker id, system) and the ENABLE ALWAYS guard');
is( $node_a->safe_psql(
		'postgres', q{
		SELECT has_table_privilege('public', 'snowflake.workers', 'SELECT'),
		       has_table_privilege('public', 'snowflake.workers', 'INSERT'),
		       has_schema_privilege('public', 'snowflake', 'USAGE'),
		       has_schema_privilege('public', 'snowflake', 'CREATE')}),
	't|f|t|f',
	'A: everyone may read the registry, nobody else may change it');
is($node_a->safe_psql('postgres', 'SELECT snowflake_check_worker()'),
	't', 'A: the check reads the moved table');
psql_fails_like(
	$node_a,
	"INSERT INTO snowflake.workers (worker_id, system_identifier, host) VALUES (2, 7000000000000000009, 'intruder')",
	qr/ERROR:  snowflake worker id 2 is already registered by another server/,
	'A: the guard still refuses a second system');

my ($dump, $dump_err) = ('', '');
IPC::Run::run(
	[
		$node_a->installed_command('pg_dump'), '-h', $node_a->host,
		'-p', $node_a->port, 'postgres'
	],
	'>', \$dump, '2>', \$dump_err);
like($dump, qr/^COPY snowflake\.workers .*^1\t\d+\tnode-a\t.*^2\t\d+\tnode-b\t/ms,
	'A: pg_dump keeps the rows of the moved table');
unlike($dump, qr/CREATE TABLE|snowflake_workers/,
	'A: ... and neither the table nor the old name');

#
# 2. Changes while only A is updated.
#
my $log_a = -s $node_a->logfile;
my $log_b = -s $node_b->logfile;
# a row written on the updated A, as snowflake.workers
$node_a->safe_psql('postgres',
	"INSERT INTO snowflake.workers (worker_id, system_identifier, host) VALUES (3, 7000000000000000003, 'node-c')"
);
# a row written on B before its update, as public.snowflake_workers
$node_b->safe_psql('postgres',
	"INSERT INTO snowflake_workers (worker_id, system_identifier, host) VALUES (4, 7000000000000000004, 'node-d')"
);
$node_b->wait_for_log(
	qr/ERROR:  logical replication target relation "snowflake\.workers" does not exist/,
	$log_b);
$node_a->wait_for_log(
	qr/ERROR:  logical replication target relation "public\.snowflake_workers" does not exist/,
	$log_a);
wait_disabled($node_b, 'reg_from_a');
wait_disabled($node_a, 'reg_from_b');
pass('each side stops applying the other\'s change, naming the table it lacks');

# Update B; its subscription then applies A's row.
$node_b->safe_psql('postgres', 'ALTER EXTENSION snowflake UPDATE');
$node_b->safe_psql('postgres', 'ALTER SUBSCRIPTION reg_from_a ENABLE');
$node_a->wait_for_catchup('reg_from_a');
is(registry($node_b), '1=node-a,2=node-b,3=node-c,4=node-d',
	'B, updated: the row A wrote in the window arrived');

# A's retry still reads B's old WAL, which names public.snowflake_workers.
$log_a = -s $node_a->logfile;
$node_a->safe_psql('postgres', 'ALTER SUBSCRIPTION reg_from_b ENABLE');
$node_a->wait_for_log(
	qr/ERROR:  logical replication target relation "public\.snowflake_workers" does not exist/,
	$log_a);
wait_disabled($node_a, 'reg_from_b');
my ($skip_lsn) =
  slurp_file($node_a->logfile, $log_a) =~ /finished at ([0-9A-F]+\/[0-9A-F]+)/;
ok(defined $skip_lsn, 'A: retrying fails the same way; the log shows where that transaction ends');

# So A skips it, and the row is copied by hand.
$node_a->safe_psql('postgres', "ALTER SUBSCRIPTION reg_from_b SKIP (lsn = '$skip_lsn')");
$node_a->safe_psql('postgres', 'ALTER SUBSCRIPTION reg_from_b ENABLE');
my $row = $node_b->safe_psql('postgres',
	"SELECT format('(%s, %s, %L, %L)', worker_id, system_identifier, host, first_seen) FROM snowflake.workers WHERE worker_id = 4"
);
$node_a->safe_psql('postgres',
	"INSERT INTO snowflake.workers (worker_id, system_identifier, host, first_seen) VALUES $row");
$node_a->wait_for_catchup('reg_from_a');
$node_b->wait_for_catchup('reg_from_b');
is(registry($node_a), '1=node-a,2=node-b,3=node-c,4=node-d', 'A: in step after the skip and the copy');
is(registry($node_b), '1=node-a,2=node-b,3=node-c,4=node-d', 'B: in step, the copy that came back skipped');

#
# 3. Both updated: the mesh replicates and guards as before.
#
$log_a = -s $node_a->logfile;
$node_b->safe_psql('postgres',
	"INSERT INTO snowflake.workers (worker_id, system_identifier, host) VALUES (5, 7000000000000000005, 'node-e')"
);
$node_b->wait_for_catchup('reg_from_b');
is(registry($node_a), '1=node-a,2=node-b,3=node-c,4=node-d,5=node-e',
	'updated mesh: a new row replicates');
# both register worker id 6 while replication is down
for ([ $node_a, 'reg_from_b' ], [ $node_b, 'reg_from_a' ])
{
	my ($node, $subname) = @$_;
	$node->safe_psql('postgres', "ALTER SUBSCRIPTION $subname DISABLE");
	$node->poll_query_until('postgres',
		"SELECT pid IS NULL FROM pg_stat_subscription WHERE subname = '$subname'")
	  or die "apply worker of $subname did not stop";
}
$node_a->safe_psql('postgres',
	"INSERT INTO snowflake.workers (worker_id, system_identifier, host) VALUES (6, 7000000000000000006, 'node-f')"
);
$node_b->safe_psql('postgres',
	"INSERT INTO snowflake.workers (worker_id, system_identifier, host) VALUES (6, 7000000000000000066, 'node-g')"
);
$node_a->safe_psql('postgres', 'ALTER SUBSCRIPTION reg_from_b ENABLE');
$node_a->wait_for_log(
	qr/ERROR:  snowflake worker id 6 is already registered by another server/, $log_a);
like(
	slurp_file($node_a->logfile, $log_a),
	qr/for replication target relation "snowflake\.workers"/,
	'updated mesh: the guard refuses a collision in the apply worker, naming snowflake.workers');
wait_disabled($node_a, 'reg_from_b');

$node_a->stop;
$node_b->stop;
done_testing();
