
# Copyright (c) 2026, snowflake contributors

# The registry can be down, and can be wrong.
#
#  1. Server x holds a lease of 1 minute.  The registry stops: x goes on
#     generating on the headroom its ceiling gives, but a call that asks for
#     more ID time than that (snowflake_nextval(n) of 75 s of IDs, at 16 IDs
#     per millisecond) is refused with the ceiling error, SQLSTATE 55000 and
#     a hint that names snowflake.registry, and issues nothing.
#  2. Server y starts while the registry is down: it refuses with "this
#     server has no snowflake worker id yet" (55000, the hint naming
#     snowflake.registry).  When the registry is back, x renews and y
#     claims, and both generate; the call x was refused now gets its IDs,
#     the keeper asking the registry for a ceiling that high at once (within
#     snowflake.max_wait, 3 s, long before the clock would bring an ordinary
#     renewal's ceiling there), and none is above the registry's ceiling.
#  3. The lease keeper is terminated (pg_terminate_backend): it releases
#     the lease as at a shutdown, and the postmaster starts it again, which
#     takes the lease back; the server goes on under the same worker id.
#  4. Bad input: an unreachable registry, a connection string with a syntax
#     error, a role without the grant on the lease functions, a registry
#     database without the extension, a layout (worker bits, epoch) other
#     than the fleet's in the registry, and a registry whose extension is
#     1.3.  In each case the server shows in snowflake_stats.lease_error, and
#     in the error of snowflake_nextval(), a message that says what to fix;
#     it holds no worker id, issues no ID and the registry has no row for
#     it.  Updating the 1.3 registry, as its message says, lets the server
#     lease a worker id.

use strict;
use warnings FATAL => 'all';

use File::Spec;
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $registry = registry_node('registry');
$registry->safe_psql('postgres', 'CREATE ROLE nogrant LOGIN');
$registry->safe_psql('postgres', 'CREATE DATABASE noext');
$registry->safe_psql('postgres', 'CREATE DATABASE old13');
$registry->safe_psql('old13', "CREATE EXTENSION snowflake VERSION '1.3'");

my $verbose = "\\set VERBOSITY verbose\n";
my $no_worker = qr/ERROR:  55000: this server has no snowflake worker id yet/;

#
# 1. A running server while the registry is down.  x has a registry
#    database of its own, for its layout.
#
$registry->safe_psql('postgres', 'CREATE DATABASE xreg');
$registry->safe_psql(
	'xreg', q{
	CREATE EXTENSION snowflake;
	GRANT EXECUTE ON FUNCTION snowflake.lease_claim, snowflake.lease_renew,
	    snowflake.lease_release TO fleet;
});
my $x = lease_node(
	'x', $registry,
	conf => {
		'snowflake.registry' => registry_conninfo($registry, 'fleet', 'xreg'),
		'snowflake.sequence_bits' => 4,
		'snowflake.lease_time' => '1min',
		'snowflake.max_drift' => '2min',
		'snowflake.max_borrow' => '2min',
		'snowflake.max_wait' => '3s'
	});
$x->start;
add_ids_table($x);
wait_for_lease($x, 'held');
my $wx = lease_stats($x, 'worker_id');
issue_ids($x, 1, 1000);

# 75 s of ID time at 16 IDs per millisecond: more than a lease of 1 minute
# (snowflake.max_borrow lets one call take that much)
my $beyond = 'SELECT count(*), max(id) FROM snowflake_nextval(1200000) AS id';

$registry->stop;
issue_ids($x, 2, 1000);
is(lease_stats($x, 'ids_issued, lease_headroom_ms > 0'),
	'2000|t', 'x goes on generating while the registry is down, within its headroom');

my $err = psql_fails_like(
	$x, $verbose . $beyond,
	qr/ERROR:  55000: snowflake IDs have reached the ceiling of this server's worker-id lease/,
	'x, asked for IDs past its ceiling with the registry down');
like(
	$err,
	qr/DETAIL:  Under worker id $wx this server may issue IDs up to \d+ until the registry raises that ceiling, and the next ID would be \d+; the lease keeper could not renew the lease within snowflake.max_wait/,
	'x: the error says which ceiling stops it');
like($err, qr/HINT:  Check the registry database named by snowflake\.registry: IDs resume as soon as the lease is renewed\./,
	'x: the hint names snowflake.registry');
wait_for_lease($x, 'registry unreachable',
	"could not renew the lease of worker id $wx: could not connect to the registry");
is(lease_stats($x, 'ids_issued, lease_failures > 0'),
	'2000|t', 'x: no ID issued past the ceiling, the failures counted');

#
# 2. A server that starts while the registry is down.
#
my $y = lease_node('y', $registry);
$y->start;
add_ids_table($y);
wait_for_lease($y, 'registry unreachable', 'could not take a worker id: could not connect to the registry');
$err = psql_fails_like($y, $verbose . 'SELECT snowflake_nextval()',
	$no_worker, 'y, started while the registry is down');
like($err, qr/DETAIL:  .*could not connect to the registry/,
	'y: the error says the registry cannot be reached');
like($err, qr/HINT:  Check that the database named by snowflake\.registry can be reached/,
	'y: the hint names snowflake.registry');
is(lease_stats($y, 'worker_id IS NULL, ids_issued, lease_ceiling IS NULL'),
	't|0|t', 'y: no worker id, no ID');

$registry->start;
wait_for_lease($x, 'held');
is(lease_stats($x, 'worker_id'), $wx, 'the registry is back: x renews its lease');
issue_ids($x, 3, 1000);
my ($count, $max) = split /\|/, $x->safe_psql('postgres', $beyond);
is($count, 1200000,
	'the registry is back: x gets 75 s of IDs in one call, the keeper asking for a ceiling that high');
is( $registry->safe_psql(
		'xreg', "SELECT ceiling >= $max FROM snowflake.workers WHERE worker_id = $wx"),
	't', "the registry's ceiling covers them");
wait_for_lease($y, 'held');
issue_ids($y, 1, 1000);
is($y->safe_psql('postgres', 'SELECT count(*) FROM ids'), '1000',
	'the registry is back: y leases a worker id and generates');

#
# 3. The lease keeper terminated.
#
my $wy = lease_stats($y, 'worker_id');
my $renewals = lease_stats($y, 'lease_renewals');
my $keeper = keeper_pid($y);
$y->safe_psql('postgres', "SELECT pg_terminate_backend($keeper)");
$y->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'snowflake lease keeper' AND pid <> $keeper"
) or die "timed out waiting for the postmaster to start y's lease keeper again";
$y->poll_query_until('postgres', "SELECT lease_renewals > $renewals FROM snowflake_stats")
  or die "timed out waiting for y's new lease keeper to renew the lease";
is(lease_stats($y, 'lease_state, worker_id'), "held|$wy",
	'y\'s lease keeper terminated: a new one holds the same worker id');
issue_ids($y, 2, 1000);
is($y->safe_psql('postgres', 'SELECT count(*) FROM ids'), '2000',
	'y\'s lease keeper terminated: y goes on generating');

is(collect_ids($x, $registry), 3000, "x's IDs collected");
is(collect_ids($y, $registry), 2000, "y's IDs collected");
check_no_duplicates($registry, 'no ID issued twice');

#
# 4. Bad input.
#
my $bad = lease_node('bad', $registry);
my $nowhere = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir);
my @cases = (
	[
		'an unreachable registry',
		{ 'snowflake.registry' => "host=$nowhere dbname=postgres user=fleet" },
		qr/could not take a worker id: could not connect to the registry: connection to server on socket "\Q$nowhere\E\/\.s\.PGSQL\.\d+" failed: No such file or directory/,
		'registry unreachable'
	],
	[
		'a connection string with a syntax error',
		{ 'snowflake.registry' => registry_conninfo($registry) . ' sslmode' },
		qr/snowflake\.registry is not a valid libpq connection string \(the server log says why\); fix it and restart the server/,
		'refused'
	],
	[
		'a role without the grant on the lease functions',
		{ 'snowflake.registry' => registry_conninfo($registry, 'nogrant') },
		qr/could not take a worker id: the registry refused: permission denied for function lease_claim/,
		'refused'
	],
	[
		'a registry database without the extension',
		{ 'snowflake.registry' => registry_conninfo($registry, 'fleet', 'noext') },
		qr/could not take a worker id: the registry database "noext" has no snowflake extension: create it there \(CREATE EXTENSION snowflake\), version 1\.4 or later/,
		'refused'
	],
	[
		'worker_bits other than the fleet\'s',
		{ 'snowflake.worker_bits' => 8 },
		qr/could not take a worker id: the registry refused: this server's snowflake layout differs from the layout of the fleet in the registry\. Worker id \d+ was leased under id_bits 63, worker_bits 10, sequence_bits 12, epoch 2025-01-01T00:00:00\.000Z; this server uses id_bits 63, worker_bits 8, sequence_bits 12, epoch 2025-01-01T00:00:00\.000Z\. Servers that share a registry must have the same snowflake\.epoch, snowflake\.id_bits, snowflake\.worker_bits and snowflake\.sequence_bits/,
		'refused'
	],
	[
		'an epoch other than the fleet\'s',
		{ 'snowflake.epoch' => '2024-06-01 12:00:00+00' },
		qr/could not take a worker id: the registry refused: this server's snowflake layout differs from the layout of the fleet in the registry\. Worker id \d+ was leased under id_bits 63, worker_bits 10, sequence_bits 12, epoch 2025-01-01T00:00:00\.000Z; this server uses id_bits 63, worker_bits 10, sequence_bits 12, epoch 2024-06-01T12:00:00\.000Z\./,
		'refused'
	],
	[
		'a registry whose extension is 1.3',
		{ 'snowflake.registry' => registry_conninfo($registry, 'fleet', 'old13') },
		qr/could not take a worker id: the registry's snowflake extension is version 1\.3, which cannot lease worker ids: update it there \(ALTER EXTENSION snowflake UPDATE\) to 1\.4 or later/,
		'refused'
	]);

my $first = 1;
foreach my $case (@cases)
{
	my ($what, $conf, $expected, $state) = @$case;

	set_snowflake_conf($bad, %$conf);
	$bad->start;
	if ($first)
	{
		add_ids_table($bad);
		$first = 0;
	}
	# the message as a POSIX regular expression: the keeper keeps trying
	wait_for_lease($bad, $state, '(could not take a worker id|not a valid libpq connection string)');
	like(lease_stats($bad, 'lease_error'), $expected, "$what: lease_error says what to fix");
	$err = psql_fails_like($bad, $verbose . 'INSERT INTO ids SELECT snowflake_nextval(), 1',
		$no_worker, "$what: snowflake_nextval()");
	like($err, qr/DETAIL:  .*$expected/, "$what: the error says what to fix");
	is(lease_stats($bad, "lease_state, worker_id IS NULL, ids_issued"),
		"$state|t|0", "$what: $state, no worker id, no ID");
	# what libpq or the registry said can name hosts, users and parts of
	# the connection string, which only superusers may read
	$bad->safe_psql('postgres',
		"DO \$\$BEGIN CREATE ROLE plain; EXCEPTION WHEN duplicate_object THEN NULL; END\$\$");
	is( $bad->safe_psql(
			'postgres',
			"SET ROLE plain; SELECT lease_error FROM snowflake_stats"),
		'the lease keeper reported a problem with the registry, which superusers and members of pg_read_all_settings can read in snowflake_stats.lease_error and in the server log',
		"$what: an ordinary role sees that there is a problem, not what the registry said");
	like(slurp_file($bad->logfile),
		qr/snowflake\.registry is not a valid connection string: missing "=" after "sslmode"/,
		"$what: libpq's message goes to the server log")
	  if $what =~ /syntax/;
	ok(!-e $bad->data_dir . '/snowflake.lease', "$what: no lease file");
	is( $registry->safe_psql(
			'postgres', "SELECT count(*) FROM snowflake.workers WHERE host = 'bad'"),
		'0', "$what: the registry has no row for the server");
	$bad->stop unless $what =~ /1\.3/;
}

# Doing what the message says.
$registry->safe_psql(
	'old13', q{
	ALTER EXTENSION snowflake UPDATE;
	GRANT EXECUTE ON FUNCTION snowflake.lease_claim, snowflake.lease_renew,
	    snowflake.lease_release TO fleet;
});
wait_for_lease($bad, 'held');
issue_ids($bad, 2, 1000);
is( $registry->safe_psql(
		'old13', "SELECT count(*) FROM snowflake.workers WHERE host = 'bad' AND holder IS NOT NULL"),
	'1', 'the registry updated to 1.4: the server leases a worker id from it');

done_testing();
