# Copyright (c) 2026, snowflake contributors

# Two servers that share a worker id, caught by the registry before they
# cost data.  Servers A and B replicate snowflake.workers to each other (each
# publishes it, each subscribes to the other; the guard trigger keeps the
# mesh from looping).
#
#  1. One registers first: the row replicates, and the other's registration
#     and check fail with an error that names both systems and hosts.
#     Taking its worker id over by UPDATE is refused too (1b), locally and
#     in the apply worker.
#  2. A central registry (any server with the extension; here reached with
#     dblink) refuses the second server at once.
#  3. The race: both register the same worker id while replication is down.
#     Both succeed locally; when replication applies the other's row, the
#     guard stops each subscription with the same clear error.  Resolving it
#     (new worker id, delete the stale row, skip the failed transaction)
#     brings both registries back in step.
#  4. The errors without a worker id and without preloading.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

sub fleet_node
{
	my ($name, $worker_id) = @_;
	my $node = snowflake_node(
		$name,
		worker_id => $worker_id,
		init => { allows_streaming => 'logical' });
	$node->start;
	$node->safe_psql(
		'postgres', q{
		CREATE EXTENSION snowflake;
		CREATE PUBLICATION registry FOR TABLE snowflake.workers;
	});
	return $node;
}

sub set_worker_id
{
	my ($node, $worker_id) = @_;
	$node->adjust_conf('postgresql.conf', 'snowflake.worker_id', $worker_id);
	$node->restart;
	return;
}

sub registry
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(worker_id || '=' || host, ',' ORDER BY worker_id) FROM snowflake.workers"
	);
}

sub wait_until_stopped
{
	my ($node, $subname) = @_;
	$node->poll_query_until('postgres',
		"SELECT pid IS NULL FROM pg_stat_subscription WHERE subname = '$subname'"
	) or die "apply worker of $subname did not stop";
	return;
}

my $node_a = fleet_node('a', 5);
my $node_b = fleet_node('b', 5);
my $sys_a = $node_a->safe_psql('postgres',
	'SELECT system_identifier FROM pg_control_system()');
my $sys_b = $node_b->safe_psql('postgres',
	'SELECT system_identifier FROM pg_control_system()');
isnt($sys_a, $sys_b, 'the two servers are different database systems');

# Each subscribes to the other's registry; a conflict disables the
# subscription, which is easy to alert on.
subscribe_registries($node_a, $node_b);

#
# 1. A registers worker id 5 first; B learns it by replication.
#
is($node_a->safe_psql('postgres', "SELECT worker_id, host FROM snowflake_register_worker('node-a')"),
	'5|node-a', 'A registers worker id 5');
is($node_a->safe_psql('postgres', 'SELECT snowflake_check_worker()'),
	't', 'A: the check passes');
$node_a->wait_for_catchup('reg_from_a');
# B applied A's row, and sent it back to A, which skipped it.
$node_b->wait_for_catchup('reg_from_b');
is(registry($node_b), '5=node-a', 'the registration reached B');
is(registry($node_a), '5=node-a', 'the row that came back to A was skipped');
is( $node_a->safe_psql(
		'postgres',
		"SELECT apply_error_count FROM pg_stat_subscription_stats WHERE subname = 'reg_from_b'"
	),
	'0',
	'... without an error');

my $err = psql_fails_like($node_b, 'SELECT snowflake_check_worker()',
	qr/ERROR:  snowflake worker id 5 is registered to another server/,
	'B: the check');
like(
	$err,
	qr/DETAIL:  The registry gives worker id 5 to database system $sys_a \(host "node-a"\) since .*; this server is database system $sys_b\./,
	'B: the check names both systems and the registered host');
$err = psql_fails_like($node_b, "SELECT snowflake_register_worker('node-b')",
	qr/ERROR:  snowflake worker id 5 is already registered by another server/,
	'B: registering worker id 5');
like(
	$err,
	qr/DETAIL:  Worker id 5 belongs to database system $sys_a \(host "node-a"\) since .*; database system $sys_b \(host "node-b"\) tried to register it too\./,
	'B: the error names both systems and hosts');
like($err, qr/HINT:  Two servers with the same worker id generate the same IDs\./,
	'B: the error has a hint');
is(registry($node_b), '5=node-a', 'B registered nothing');

#
# 1b. Nor can B take worker id 5 over by UPDATE: refused locally, and when
#     the UPDATE comes from a server without the guard (here B with the
#     trigger disabled, as on an older version), A's apply worker refuses it.
#
$err = psql_fails_like(
	$node_b,
	"UPDATE snowflake.workers SET system_identifier = $sys_b, host = 'node-b' WHERE worker_id = 5",
	qr/ERROR:  snowflake worker id 5 is already registered by another server/,
	'B: taking worker id 5 over by UPDATE');
like(
	$err,
	qr/DETAIL:  Worker id 5 belongs to database system $sys_a \(host "node-a"\) since .*; an update tried to give it to database system $sys_b \(host "node-b"\)\./,
	'B: the UPDATE error names both systems');

my $log_a = -s $node_a->logfile;
$node_b->safe_psql(
	'postgres', qq{
	ALTER TABLE snowflake.workers DISABLE TRIGGER workers_guard;
	UPDATE snowflake.workers SET system_identifier = $sys_b, host = 'node-b' WHERE worker_id = 5;
	ALTER TABLE snowflake.workers ENABLE ALWAYS TRIGGER workers_guard;
});
$node_a->wait_for_log(
	qr/DETAIL:  Worker id 5 belongs to database system $sys_a \(host "node-a"\) since .*; an update tried to give it to database system $sys_b \(host "node-b"\)\./,
	$log_a);
$node_a->poll_query_until('postgres',
	"SELECT NOT subenabled FROM pg_subscription WHERE subname = 'reg_from_b'")
  or die "reg_from_b was not disabled";
is(registry($node_a), '5=node-a', 'A refused the replicated UPDATE and kept its row');
like(
	slurp_file($node_a->logfile, $log_a),
	qr/during message type "UPDATE" for replication target relation "snowflake\.workers"/,
	'... in its apply worker');

# Undo it on B the same way, and let A skip the refused transaction; the
# undo finds no row to change on A.
my ($update_lsn) = slurp_file($node_a->logfile, $log_a) =~ /finished at ([0-9A-F]+\/[0-9A-F]+)/;
ok(defined $update_lsn, 'the log shows where the refused UPDATE ends');
$node_b->safe_psql(
	'postgres', qq{
	ALTER TABLE snowflake.workers DISABLE TRIGGER workers_guard;
	UPDATE snowflake.workers SET system_identifier = $sys_a, host = 'node-a' WHERE worker_id = 5;
	ALTER TABLE snowflake.workers ENABLE ALWAYS TRIGGER workers_guard;
});
$node_a->safe_psql('postgres', "ALTER SUBSCRIPTION reg_from_b SKIP (lsn = '$update_lsn')");
$node_a->safe_psql('postgres', 'ALTER SUBSCRIPTION reg_from_b ENABLE');
$node_b->wait_for_catchup('reg_from_b');
is(registry($node_a), '5=node-a', 'A\'s registry after the skip');
is( $node_b->safe_psql(
		'postgres',
		"SELECT system_identifier FROM snowflake.workers WHERE worker_id = 5"),
	$sys_a,
	'B\'s registry is back in step');

#
# 2. A central registry refuses the second server at once.  It needs the
#    extension's files, not the preload: the guard is plain PL/pgSQL.
#
SKIP:
{
	skip_unless(-e $node_a->config_data('--sharedir') . '/extension/dblink.control',
		'dblink is not installed', 4);

	my $central = snowflake_node('central', preload => 0);
	$central->start;
	$central->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	my $central_connstr = $central->connstr . ' dbname=postgres';
	# what a deploy step runs on each server
	my $push = sub {
		my ($host) = @_;
		return qq{
		SELECT dblink_exec('$central_connstr',
		    format('INSERT INTO snowflake.workers (worker_id, system_identifier, host) VALUES (%s, %s, %L)',
		           worker_id, system_identifier, '$host'))
		  FROM snowflake_worker_identity()};
	};
	$node_a->safe_psql('postgres', 'CREATE EXTENSION dblink');
	$node_a->safe_psql('postgres', $push->('node-a'));
	is(registry($central), '5=node-a', 'central: A registered');

	$node_b->safe_psql('postgres', 'CREATE EXTENSION dblink');
	$err = psql_fails_like($node_b, $push->('node-b'),
		qr/ERROR:  snowflake worker id 5 is already registered by another server/,
		'central: B registering worker id 5');
	like(
		$err,
		qr/DETAIL:  Worker id 5 belongs to database system $sys_a \(host "node-a"\).*database system $sys_b \(host "node-b"\)/,
		'central: the error names both systems');
	$central->stop;
}

#
# 3. The race: with replication down, both register worker id 6.
#
$node_a->safe_psql('postgres', 'ALTER SUBSCRIPTION reg_from_b DISABLE');
$node_b->safe_psql('postgres', 'ALTER SUBSCRIPTION reg_from_a DISABLE');
wait_until_stopped($node_a, 'reg_from_b');
wait_until_stopped($node_b, 'reg_from_a');
set_worker_id($node_a, 6);
set_worker_id($node_b, 6);
is($node_a->safe_psql('postgres', "SELECT worker_id FROM snowflake_register_worker('node-a')"),
	'6', 'race: A registers worker id 6 locally');
is($node_b->safe_psql('postgres', "SELECT worker_id FROM snowflake_register_worker('node-b')"),
	'6', 'race: B registers worker id 6 locally too');

$log_a = -s $node_a->logfile;
my $log_b = -s $node_b->logfile;
$node_a->safe_psql('postgres', 'ALTER SUBSCRIPTION reg_from_b ENABLE');
$node_b->safe_psql('postgres', 'ALTER SUBSCRIPTION reg_from_a ENABLE');

my $collision = qr/ERROR:  snowflake worker id 6 is already registered by another server/;
$node_a->wait_for_log($collision, $log_a);
$node_b->wait_for_log($collision, $log_b);
my $text_a = slurp_file($node_a->logfile, $log_a);
my $text_b = slurp_file($node_b->logfile, $log_b);
like(
	$text_a,
	qr/DETAIL:  Worker id 6 belongs to database system $sys_a \(host "node-a"\) since .*; database system $sys_b \(host "node-b"\) tried to register it too\./,
	'race: A\'s log names both systems when B\'s row arrives');
like(
	$text_b,
	qr/DETAIL:  Worker id 6 belongs to database system $sys_b \(host "node-b"\) since .*; database system $sys_a \(host "node-a"\) tried to register it too\./,
	'race: B\'s log names both systems when A\'s row arrives');
like($text_a, qr/subscription "reg_from_b" has been disabled because of an error/,
	'race: A\'s subscription stopped');
for ([ $node_a, 'reg_from_b' ], [ $node_b, 'reg_from_a' ])
{
	my ($node, $subname) = @$_;
	$node->poll_query_until('postgres',
		"SELECT NOT subenabled FROM pg_subscription WHERE subname = '$subname'")
	  or die "$subname was not disabled";
	is( $node->safe_psql(
			'postgres',
			"SELECT apply_error_count > 0 FROM pg_stat_subscription_stats WHERE subname = '$subname'"
		),
		't',
		"race: $subname counts the apply error");
}
is(registry($node_a), '5=node-a,6=node-a', 'race: A kept its row');
is(registry($node_b), '5=node-a,6=node-b', 'race: B kept its row');

# Resolve: B takes worker id 7 and deletes its stale row; A skips the failed
# transaction (its LSN is in the log's CONTEXT line).
my ($skip_lsn) = $text_a =~ /finished at ([0-9A-F]+\/[0-9A-F]+)/;
ok(defined $skip_lsn, 'race: the log shows where the failed transaction ends');
set_worker_id($node_b, 7);
$node_b->safe_psql(
	'postgres', qq{
	DELETE FROM snowflake.workers WHERE worker_id = 6 AND system_identifier = $sys_b;
	SELECT snowflake_register_worker('node-b');
});
$node_a->safe_psql('postgres', "ALTER SUBSCRIPTION reg_from_b SKIP (lsn = '$skip_lsn')");
$node_a->safe_psql('postgres', 'ALTER SUBSCRIPTION reg_from_b ENABLE');
$node_b->safe_psql('postgres', 'ALTER SUBSCRIPTION reg_from_a ENABLE');
$node_a->wait_for_catchup('reg_from_a');
$node_b->wait_for_catchup('reg_from_b');
$node_a->wait_for_catchup('reg_from_a');
is(registry($node_a), '5=node-a,6=node-a,7=node-b', 'resolved: A\'s registry');
is(registry($node_b), '5=node-a,6=node-a,7=node-b', 'resolved: B\'s registry');
is($node_a->safe_psql('postgres', 'SELECT snowflake_check_worker()'), 't', 'resolved: A\'s check passes');
is($node_b->safe_psql('postgres', 'SELECT snowflake_check_worker()'), 't', 'resolved: B\'s check passes');
is( $node_a->safe_psql(
		'postgres',
		"SELECT subenabled FROM pg_subscription WHERE subname = 'reg_from_b'"),
	't',
	'resolved: A\'s subscription runs');
is( $node_b->safe_psql(
		'postgres',
		"SELECT subenabled FROM pg_subscription WHERE subname = 'reg_from_a'"),
	't',
	'resolved: B\'s subscription runs');

# pg_dump keeps the registry's rows (the table comes with CREATE EXTENSION).
my ($dump, $dump_err) = ('', '');
IPC::Run::run(
	[
		$node_a->installed_command('pg_dump'), '-h', $node_a->host,
		'-p', $node_a->port, 'postgres'
	],
	'>', \$dump, '2>', \$dump_err);
like($dump, qr/^COPY snowflake\.workers .*^5\t$sys_a\tnode-a\t/ms,
	'pg_dump keeps the registry rows');
unlike($dump, qr/CREATE TABLE snowflake\.workers/,
	'... but not the table, which CREATE EXTENSION makes');

#
# 4. Without a worker id, and without the preload.
#
$node_b->safe_psql('postgres', 'ALTER SUBSCRIPTION reg_from_a DISABLE');
wait_until_stopped($node_b, 'reg_from_a');
set_worker_id($node_b, -1);
is($node_b->safe_psql('postgres', 'SELECT worker_id IS NULL FROM snowflake_worker_identity()'),
	't', 'unset: the identity has no worker id');
psql_fails_like($node_b, 'SELECT snowflake_register_worker()',
	qr/ERROR:  snowflake\.worker_id is not set/, 'unset: registering');
psql_fails_like($node_b, 'SELECT snowflake_check_worker()',
	qr/ERROR:  snowflake\.worker_id is not set/, 'unset: the check');

$node_b->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
$node_b->restart;
psql_fails_like($node_b, 'SELECT snowflake_register_worker()',
	qr/ERROR:  snowflake must be loaded via shared_preload_libraries/,
	'not preloaded: registering');
psql_fails_like($node_b, 'SELECT snowflake_check_worker()',
	qr/ERROR:  snowflake must be loaded via shared_preload_libraries/,
	'not preloaded: the check');

$node_a->stop;
$node_b->stop;
done_testing();
