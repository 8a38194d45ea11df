
# Copyright (c) 2026, snowflake contributors

# Worker ids from a registry, with no worker id configured per server.  A
# registry (a plain server with the extension, the library not preloaded)
# and three servers s1, s2, s3 that include one shared postgresql.conf
# fragment (the library, snowflake.registry, snowflake.lease_time 2 s):
#
#  1. They get distinct worker ids, and snowflake_stats shows each lease
#     held; each server's IDs carry its own worker id.
#  2. s1 (its lease 10 minutes long, so that its ceiling stands far ahead of
#     the clock and a lapse cannot happen during the test) restarts cleanly:
#     the stop released the lease, lowering its ceiling to the last ID, and
#     the server takes the same worker id back and goes on right after its
#     last ID, not a lease ahead.  Then it crashes (stop 'immediate') and
#     takes the same worker id back at once, long before its lease could
#     lapse: only the proof in its lease file allows that.  Its IDs then
#     start above the ceiling the registry recorded before the crash.
#  3. Least privilege on the registry: the role the servers log in as
#     cannot write the table, the table keeps only digests of the holders'
#     tokens, and a role without the grant cannot call the lease functions.
#     On a server, the connection string is visible to superusers only.
#  4. A password from a .pgpass file (PGPASSFILE in the server's
#     environment) works with a connection string that has none: s3 logs in
#     as a role that must give a password, fails without the file and holds
#     its worker id with it.
#  5. A streaming standby of s1, promoted while s1 is down after a crash,
#     takes s1's worker id by the proof replicated in WAL, and issues IDs
#     above every ID s1 issued and above s1's last ceiling.
#  6. A configured worker id with a registry: s2, configured with worker id
#     7 (and a lease of 10 minutes, which cannot lapse during the test),
#     leases 7; a second server c2 configured with 7 is refused, with an
#     error naming s2, and generates nothing; once s2 stops cleanly, c2
#     takes 7 and issues IDs above all of s2's.
#
# Every ID any server issued is collected in the registry's table ids at
# the end: none repeats.

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

# The fleet's one configuration fragment: no worker id in it.
my $fleet_conf = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir . '/fleet.conf');
append_to_file($fleet_conf,
	"shared_preload_libraries = 'snowflake'\n"
	  . "snowflake.registry = '" . registry_conninfo($registry) . "'\n"
	  . "snowflake.lease_time = '2s'\n");

my %init = (s1 => { allows_streaming => 1 });
my ($s1, $s2, $s3) = map {
	snowflake_node(
		$_,
		preload => 0,
		conf => { include => $fleet_conf },
		init => $init{$_} // {})
} qw(s1 s2 s3);

# s1 only: a lease of 10 minutes, whose ceiling runs that far ahead of the
# clock (max_drift lets IDs follow it after a crash)
set_snowflake_conf($s1,
	'snowflake.lease_time' => '10min',
	'snowflake.max_drift' => '20min');

#
# 1. Three servers, one configuration, three worker ids.
#
my %worker;
foreach my $node ($s1, $s2, $s3)
{
	$node->start;
	add_ids_table($node);
}
foreach my $node ($s1, $s2, $s3)
{
	my $name = $node->name;

	wait_for_lease($node, 'held');
	is( $node->safe_psql(
			'postgres', q{
			SELECT string_agg(name || ':' || source, ',' ORDER BY name)
			  FROM pg_settings
			 WHERE name IN ('snowflake.registry', 'snowflake.worker_id')}),
		'snowflake.registry:configuration file,snowflake.worker_id:default',
		"$name: the registry is configured, the worker id is not");
	is( lease_stats(
			$node,
			'worker_id IS NOT NULL, lease_expires IS NOT NULL, lease_ceiling IS NOT NULL, '
			  . 'lease_headroom_ms IS NOT NULL, lease_renewals > 0, lease_error IS NULL'),
		't|t|t|t|t|t',
		"$name: snowflake_stats shows the lease held, renewed, without an error");
	$worker{$name} = lease_stats($node, 'worker_id');
	issue_ids($node, 1, 1000);
	is( $node->safe_psql(
			'postgres',
			'SELECT count(*) FROM ids WHERE (snowflake_parse(id)).worker_id <> '
			  . $worker{$name}),
		'0',
		"$name: its IDs carry worker id $worker{$name}");
}
note "worker ids: " . join(', ', map { "$_ => $worker{$_}" } sort keys %worker);
is(scalar(keys %{ { reverse %worker } }), 3, 'the three servers have distinct worker ids');
is( $registry->safe_psql(
		'postgres', q{
		SELECT string_agg(host || '=' || worker_id, ',' ORDER BY host)
		  FROM snowflake.workers
		 WHERE holder IS NOT NULL}),
	"s1=$worker{s1},s2=$worker{s2},s3=$worker{s3}",
	'the registry shows the three leases, each held by its server');

#
# 2. s1: a clean restart, then a crash.
#
my $max1 = max_id($s1);
$s1->stop;
is(lease_row($registry, $worker{s1}, "lease_expires <= now(), ceiling = $max1"),
	't|t', 's1 stopped cleanly: the lease is released, its ceiling lowered to the last ID issued');

$s1->start;
wait_for_lease($s1, 'held');
is(lease_stats($s1, 'worker_id'), $worker{s1}, 's1 restarted cleanly: same worker id');
is(lease_row($registry, $worker{s1}, 'fence'), $max1,
	's1 restarted cleanly: fenced right at its last ID');
issue_above($s1, 2, 1000, $max1, 's1 restarted cleanly: IDs go on above the last one');
# A lease's ceiling is 10 minutes ahead of the clock: had the restart
# resumed there, the drift would be about that.
is(lease_stats($s1, 'drift_ms < 60000'), 't',
	's1 restarted cleanly: IDs go on near the clock, not a lease ahead');

my $max2 = max_id($s1);
$s1->stop('immediate');
my ($ceiling, $expires) = split /\|/,
  lease_row($registry, $worker{s1}, 'ceiling, lease_expires');
is(lease_row($registry, $worker{s1}, "lease_expires > now(), ceiling >= $max2"),
	't|t', 's1 crashed: its lease still runs, its ceiling covers its IDs');

$s1->start;
wait_for_lease($s1, 'held');
is(lease_stats($s1, 'worker_id'), $worker{s1}, 's1 restarted after a crash: same worker id');
is(lease_row($registry, $worker{s1}, "fence = $ceiling, held_since < '$expires'"),
	't|t',
	's1 restarted after a crash: took its worker id back before the lease lapsed (by proof), fenced at the last ceiling');
issue_above($s1, 3, 1000, $ceiling,
	's1 restarted after a crash: IDs start above the last ceiling');

#
# 3. Least privilege.
#
my ($lease_worker, $token) = split ' ', slurp_file($s2->data_dir . '/snowflake.lease');
is($lease_worker, $worker{s2}, "s2's lease file holds its worker id and a token");
like($token, qr/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
	"s2's token is a random UUID");

foreach my $statement (
	'INSERT INTO snowflake.workers (worker_id, system_identifier) VALUES (1000, 1)',
	"UPDATE snowflake.workers SET ceiling = 0 WHERE worker_id = $worker{s2}",
	"UPDATE snowflake.workers SET lease_expires = now() WHERE worker_id = $worker{s2}",
	"DELETE FROM snowflake.workers WHERE worker_id = $worker{s2}",
	'TRUNCATE snowflake.workers')
{
	psql_fails_like($registry, "SET ROLE fleet; $statement",
		qr/permission denied for table workers/,
		"the fleet's role: $statement");
}
is( $registry->safe_psql(
		'postgres', qq{
		SET ROLE fleet;
		SELECT holder = sha256(uuid_send('$token')),
		       position('$token' IN w::text) = 0,
		       position(replace('$token', '-', '') IN w::text) = 0
		  FROM snowflake.workers w WHERE worker_id = $worker{s2}}),
	't|t|t',
	'the registry keeps the SHA-256 of the token, never the token');
is( $registry->safe_psql(
		'postgres', qq{
		SET ROLE fleet;
		SELECT count(*) FROM snowflake.lease_renew($worker{s2}, gen_random_uuid(), 9223372036854775807, 60000);
		SELECT snowflake.lease_release($worker{s2}, gen_random_uuid(), 0);
		SELECT ceiling < 9223372036854775807
		  FROM snowflake.workers WHERE worker_id = $worker{s2}}),
	"0\nf\nt",
	'the fleet\'s role cannot renew or release a lease without its token');
$registry->safe_psql('postgres', 'CREATE ROLE outsider LOGIN');
foreach my $call (
	"snowflake.lease_claim(1, 'x', 'layout', 10, 60000, gen_random_uuid(), NULL, NULL, false)",
	"snowflake.lease_renew($worker{s2}, gen_random_uuid(), 0, 60000)",
	"snowflake.lease_release($worker{s2}, gen_random_uuid(), 0)")
{
	my ($function) = $call =~ /^snowflake\.(\w+)/;
	psql_fails_like($registry, "SET ROLE outsider; SELECT * FROM $call",
		qr/permission denied for function $function/,
		"a role without the grant: $function");
}

$s2->safe_psql('postgres', 'CREATE ROLE app LOGIN');
is($s2->safe_psql('postgres', 'SHOW snowflake.registry'),
	registry_conninfo($registry), 'a superuser sees the connection string');
psql_fails_like($s2, 'SET ROLE app; SHOW snowflake.registry',
	qr/must be superuser|permission denied/,
	'an ordinary role: SHOW snowflake.registry');
psql_fails_like($s2, "SET ROLE app; SELECT current_setting('snowflake.registry')",
	qr/must be superuser|permission denied/,
	'an ordinary role: current_setting(\'snowflake.registry\')');
is( $s2->safe_psql(
		'postgres', q{
		SET ROLE app;
		SELECT count(*) FROM pg_settings WHERE name = 'snowflake.registry';
		SELECT lease_state FROM snowflake_stats}),
	"0\nheld",
	'an ordinary role: pg_settings hides the connection string; snowflake_stats shows the lease');

#
# 4. A password from a .pgpass file.
#
$registry->safe_psql(
	'postgres', q{
	CREATE ROLE fleet_pw LOGIN PASSWORD 'lease-secret';
	GRANT EXECUTE ON FUNCTION snowflake.lease_claim, snowflake.lease_renew,
	    snowflake.lease_release TO fleet_pw;
});
my $hba = $registry->data_dir . '/pg_hba.conf';
my $hba_lines = slurp_file($hba);
open my $hba_fh, '>', $hba or die "could not write $hba: $!";
print $hba_fh "local all fleet_pw scram-sha-256\n"
  . "host all fleet_pw 127.0.0.1/32 scram-sha-256\n"
  . $hba_lines;
close $hba_fh or die "could not close $hba: $!";
$registry->reload;
$registry->poll_query_until('postgres',
	"SELECT count(*) > 0 FROM pg_hba_file_rules WHERE 'fleet_pw' = ANY (user_name)")
  or die 'timed out waiting for the registry to load its new pg_hba.conf';

my $pgpass = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir . '/pgpass');
append_to_file($pgpass, "*:*:*:fleet_pw:lease-secret\n");
chmod 0600, $pgpass or die "could not chmod $pgpass: $!";

$s3->stop;
set_snowflake_conf($s3, 'snowflake.registry' => registry_conninfo($registry, 'fleet_pw'));
{
	local $ENV{PGPASSFILE} = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir . '/no-pgpass');
	$s3->start;
}
wait_for_lease($s3, 'registry unreachable', 'no password supplied');
psql_fails_like($s3, 'SELECT snowflake_nextval()',
	qr/ERROR:  this server has no snowflake worker id yet/,
	's3 without a password for the registry');
$s3->stop;
{
	local $ENV{PGPASSFILE} = $pgpass;
	$s3->start;
}
wait_for_lease($s3, 'held');
is(lease_stats($s3, 'worker_id'), $worker{s3},
	's3 with the password from PGPASSFILE: holds its worker id again');
is( $registry->safe_psql(
		'postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE usename = 'fleet_pw' AND application_name = 'snowflake lease keeper'"
	),
	'1',
	"the registry sees s3's keeper logged in as fleet_pw");
issue_above($s3, 2, 1000, max_id($s3), 's3 issues IDs again');

#
# 5. A standby of s1, promoted while s1 is down after a crash.
#
$s1->backup('s1_backup');
my $standby = PostgreSQL::Test::Cluster->new('s1_standby');
$standby->init_from_backup($s1, 's1_backup', has_streaming => 1);
$standby->start;
issue_ids($s1, 4, 1000);
$s1->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT count(*) FROM ids'),
	'4000', "the standby has replayed all of s1's IDs");
is(lease_stats($standby, 'lease_state, worker_id IS NULL'),
	'standby|t', 'the standby holds no lease while in recovery');

$s1->stop('immediate');
($ceiling, $expires) = split /\|/, lease_row($registry, $worker{s1}, 'ceiling, lease_expires');
is( $standby->safe_psql(
		'postgres', "SELECT max(id) <= $ceiling FROM ids"),
	't', "s1 issued no ID above its lease's ceiling");
$standby->promote;
wait_for_lease($standby, 'held');
is(lease_stats($standby, 'worker_id'), $worker{s1},
	'the promoted standby continues under s1\'s worker id');
is( lease_row($registry, 
		$worker{s1}, "host, fence = $ceiling, held_since < '$expires'"),
	's1_standby|t|t',
	'the promoted standby took the worker id before s1\'s lease lapsed (by the proof from WAL), fenced at s1\'s last ceiling'
);
issue_above($standby, 5, 1000, $ceiling,
	'the promoted standby issues IDs above s1\'s last ceiling');

#
# 6. A configured worker id with a registry.
#
$s2->stop;
set_snowflake_conf($s2,
	'snowflake.worker_id' => 7,
	'snowflake.lease_time' => '10min');
$s2->start;
wait_for_lease($s2, 'held');
is(lease_stats($s2, 'worker_id'), '7', 's2 configured with worker id 7 leases it');
is(lease_row($registry, $worker{s2}, 'lease_expires <= now()'),
	't', 's2 released its earlier worker id when it stopped');
issue_ids($s2, 2, 1000);

my $c2 = lease_node('c2', $registry, worker_id => 7);
$c2->start;
add_ids_table($c2);
check_twin_refused($c2, $s2, 7);
issue_ids($s2, 3, 1000);

is(collect_ids($s2, $registry), 3000, "s2's IDs collected");
my $max_s2 = max_id($s2);
$s2->stop;
wait_for_lease($c2, 'held');
is(lease_stats($c2, 'worker_id'), '7', 'c2 takes worker id 7 once s2 stopped');
is(lease_row($registry, 7, "host, fence = $max_s2"), 'c2|t',
	'c2 is fenced at the last ID s2 issued');
issue_ids($c2, 1, 1000);

#
# Every ID issued, in one place.
#
is(collect_ids($c2, $registry), 1000, "c2's IDs collected");
check_fenced($registry, 's2', 'c2', 7, 'worker id 7: all of c2\'s IDs are above all of s2\'s');
is(collect_ids($s3, $registry), 2000, "s3's IDs collected");
is(collect_ids($standby, $registry, 's1'), 5000, "s1's IDs and the promoted standby's collected");
check_no_duplicates($registry, 'no ID was issued twice by any server');

done_testing();
