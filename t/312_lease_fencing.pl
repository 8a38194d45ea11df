
# Copyright (c) 2026, snowflake contributors

# Two holders of one worker id issue disjoint IDs, even at the same time,
# because a new holder starts above the last ceiling the registry recorded
# for that worker id.  In each case the later holder's clock is 10 minutes
# behind (libfaketime; snowflake.max_drift lets it run that far ahead), so
# that its clock would put its IDs far below the earlier holder's: only the
# fence puts them above.  In each case, among the IDs both issued (collected
# in the registry), none repeats and under the shared worker id every ID of
# the later holder is above every ID of the earlier one.
#
#  a. A lease lapses while its holder still runs: server a's lease keeper
#     is stopped (SIGSTOP), a goes on generating until its ceiling and then
#     refuses; once the lease lapsed on the registry's clock, server b,
#     configured with a's worker id, takes it over.  When a's keeper goes on
#     (SIGCONT), it finds the lease lost, and a, having no configured worker
#     id, moves to another one; then both generate at once.
#  b. Split brain: a standby of server p is promoted while p keeps writing.
#     The standby takes p's worker id at once by the proof replicated in
#     WAL (p's lease, 10 minutes long, is far from lapsing), and both issue
#     IDs under it at the same time, p below its ceiling, the standby above
#     it.  p goes on until its IDs pass the last mark the standby replayed
#     (about a second ahead of p's IDs when the standby was cut off from
#     p), where the standby would have started without the fence.  At p's
#     next renewal (brought forward by a shorter lease_time) p finds the
#     lease lost and moves to another worker id.
#
# A server that finds its lease lost says so in a WARNING, which the test
# waits for: the state 'lost' lasts only until it has claimed another
# worker id, half a second later.
#  c. Two servers configured by hand with the same worker id and one
#     registry: the second is refused and generates nothing while the first
#     holds it (with a lease of 10 minutes, which cannot lapse meanwhile);
#     when the first crashes (having renewed for 2 s just before), the
#     second takes the worker id once the lease lapsed, above the first's
#     last ceiling.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

need_libfaketime();

my $registry = registry_node('registry');

my $ceiling_error =
  qr/ERROR:  snowflake IDs have reached the ceiling of this server's worker-id lease/;

# Wait until $node's keeper logs that another server took over $worker, and
# return the last ceiling it says it stops at.
sub wait_for_lost
{
	my ($node, $worker, $log_offset) = @_;
	my $lost =
	  qr/another server took over worker id $worker; this server issues IDs only up to its last ceiling, (\d+),/;

	eval { $node->wait_for_log($lost, $log_offset); 1 }
	  or die sprintf(
		"timed out waiting for %s to log that another server took over worker id %s: %s",
		$node->name, $worker, $@);
	my ($ceiling) = slurp_file($node->logfile, $log_offset) =~ $lost;
	return $ceiling;
}

#
# a. A lease that lapses and is taken over while its holder still runs.
#
my $a = lease_node('a', $registry, conf => { 'snowflake.max_wait' => '1s' });
$a->start;
add_ids_table($a);
wait_for_lease($a, 'held');
my $wa = lease_stats($a, 'worker_id');
issue_ids($a, 1, 1000);

my $keeper = keeper_pid($a);
kill 'STOP', $keeper or die "could not stop a's lease keeper: $!";
$registry->poll_query_until('postgres',
	"SELECT lease_expires <= now() FROM snowflake.workers WHERE worker_id = $wa")
  or die "timed out waiting for a's lease of worker id $wa to lapse";
$a->poll_query_until('postgres', 'SELECT lease_headroom_ms < 0 FROM snowflake_stats')
  or die "timed out waiting for a's clock to pass its lease's ceiling";
psql_fails_like($a, 'INSERT INTO ids SELECT snowflake_nextval(), 2',
	$ceiling_error, 'a, its keeper stopped and its ceiling passed');
my $a_ceiling = lease_stats($a, 'lease_ceiling');

my $b = lease_node(
	'b', $registry,
	worker_id => $wa,
	conf => { 'snowflake.max_drift' => '20min' });
start_with_fake_clock($b, '-600');
clock_offset_ok($b, -600, "b's clock is 10 minutes behind");
add_ids_table($b);
wait_for_lease($b, 'held');
is(lease_stats($b, 'worker_id'), $wa, "b, configured with a's worker id, takes it over");
is(lease_row($registry, $wa, "host, fence >= $a_ceiling"),
	'b|t', "b is fenced at or above a's last ceiling");
issue_ids($b, 1, 1000);
psql_fails_like($a, 'INSERT INTO ids SELECT snowflake_nextval(), 2',
	$ceiling_error, 'a, while b holds its worker id');

my $log_offset = -s $a->logfile;
kill 'CONT', $keeper or die "could not continue a's lease keeper: $!";
my $a_lost_ceiling = wait_for_lost($a, $wa, $log_offset);
is($a_lost_ceiling, $a_ceiling, 'a finds its lease lost, and stops at its last ceiling');
wait_for_lease($a, 'held');
my $a_moved = lease_stats($a, 'worker_id');
isnt($a_moved, $wa, "a moves to another worker id ($a_moved)");

# both at once
my $run_a = psql_in_background($a,
	'INSERT INTO ids SELECT snowflake_nextval(), 3 FROM generate_series(1, 5000)');
my $run_b = psql_in_background($b,
	'INSERT INTO ids SELECT snowflake_nextval(), 2 FROM generate_series(1, 5000)');
psql_finished_ok($run_a, 'a generating under its new worker id');
psql_finished_ok($run_b, "b generating under a's old worker id");

is(collect_ids($a, $registry), 6000, "a's IDs collected");
is(collect_ids($b, $registry), 6000, "b's IDs collected");
is( $registry->safe_psql(
		'postgres', "SELECT max(id) <= $a_ceiling FROM ids WHERE server = 'a' AND worker = $wa"),
	't', "a issued no ID above its last ceiling under worker id $wa");
check_fenced($registry, 'a', 'b', $wa,
	"a lapsed lease taken over: b's IDs are above all of a's under worker id $wa");

#
# b. Split brain: a standby promoted while its primary keeps writing.
#
my $p = lease_node(
	'p', $registry,
	init => { allows_streaming => 1 },
	conf => {
		'snowflake.lease_time' => '10min',
		'snowflake.max_drift' => '30min'
	});
$p->start;
add_ids_table($p);
wait_for_lease($p, 'held');
my $wp = lease_stats($p, 'worker_id');
issue_ids($p, 1, 1000);
$p->backup('p_backup');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($p, 'p_backup', has_streaming => 1);
start_with_fake_clock($standby, '-600');
issue_ids($p, 1, 1000);
$p->wait_for_catchup($standby);
clock_offset_ok($standby, -600, "the standby's clock is 10 minutes behind");
# Cut the standby off from p, so that the mark it replayed last stays its
# last: without the fence, it would start right above that mark.
$standby->append_conf('postgresql.conf', "primary_conninfo = ''");
$standby->reload;
$standby->poll_query_until('postgres', 'SELECT count(*) = 0 FROM pg_stat_wal_receiver')
  or die "timed out waiting for the standby's WAL receiver to stop";
my $replayed_mark = lease_stats($standby, 'mark_id');

$standby->promote;
wait_for_lease($standby, 'held');
is(lease_stats($standby, 'worker_id'), $wp,
	"the promoted standby takes p's worker id at once (by the proof), while p's lease runs"
);
my $fence = lease_row($registry, $wp, 'fence');

# p does not know yet: both issue IDs under the same worker id, at once
$run_a = psql_in_background($p,
	'INSERT INTO ids SELECT snowflake_nextval(), 2 FROM generate_series(1, 5000)');
$run_b = psql_in_background($standby,
	'INSERT INTO ids SELECT snowflake_nextval(), 3 FROM generate_series(1, 5000)');
psql_finished_ok($run_a, "p generating under worker id $wp");
psql_finished_ok($run_b, "the promoted standby generating under worker id $wp");
$p->poll_query_until('postgres',
	"SELECT snowflake_compose(clock_timestamp(), 0, 0) > $replayed_mark")
  or die "timed out waiting for p's clock to pass the mark the standby replayed";
issue_ids($p, 2, 1000);
is(lease_stats($p, 'worker_id'), $wp, "p issued those under worker id $wp");

$log_offset = -s $p->logfile;
reload_snowflake_conf($p, 'snowflake.lease_time' => 2000);
my $p_lost_ceiling = wait_for_lost($p, $wp, $log_offset);
cmp_ok($p_lost_ceiling, '<=', $fence,
	"p finds its lease lost; its last ceiling is at or below the standby's fence");
wait_for_lease($p, 'held');
my $p_moved = lease_stats($p, 'worker_id');
isnt($p_moved, $wp, "p moves to another worker id ($p_moved)");
issue_ids($p, 3, 1000);

is(collect_ids($p, $registry), 9000, "p's IDs collected");
is( $registry->safe_psql(
		'postgres',
		"SELECT count(*) > 0 FROM ids WHERE server = 'p' AND worker = $wp AND id > $replayed_mark"),
	't', "p issued IDs above the mark the standby replayed, under worker id $wp");
is(collect_ids($standby, $registry, 'standby', 'phase = 3'),
	5000, "the promoted standby's own IDs collected");
is( $registry->safe_psql(
		'postgres', "SELECT max(id) <= $p_lost_ceiling FROM ids WHERE server = 'p' AND worker = $wp"),
	't', "p issued no ID above its last ceiling under worker id $wp");
check_fenced($registry, 'p', 'standby', $wp,
	"split brain: the promoted standby's IDs are above all of p's under worker id $wp");

#
# c. Two servers configured with the same worker id.
#
my $c1 = lease_node(
	'c1', $registry,
	worker_id => 5,
	conf => { 'snowflake.lease_time' => '10min' });
$c1->start;
add_ids_table($c1);
wait_for_lease($c1, 'held');
is(lease_stats($c1, 'worker_id'), '5', 'c1 leases its configured worker id 5');
issue_ids($c1, 1, 1000);

my $c2 = lease_node(
	'c2', $registry,
	worker_id => 5,
	conf => { 'snowflake.max_drift' => '20min' });
start_with_fake_clock($c2, '-600');
add_ids_table($c2);
check_twin_refused($c2, $c1, 5);
issue_ids($c1, 2, 1000);

is(collect_ids($c1, $registry), 2000, "c1's IDs collected");
shorten_lease($c1, $registry);
$c1->stop('immediate');
my $c1_expires = lease_row($registry, 5, 'lease_expires');
wait_for_lease($c2, 'held');
is(lease_stats($c2, 'worker_id'), '5', 'c2 takes worker id 5 after c1 crashed');
is(lease_row($registry, 5, "host, held_since >= '$c1_expires'"),
	'c2|t', "c2 took it only once c1's lease had lapsed");
issue_ids($c2, 1, 1000);
is(collect_ids($c2, $registry), 1000, "c2's IDs collected");
check_fenced($registry, 'c1', 'c2', 5,
	"configured twins: c2's IDs are above all of c1's under worker id 5");

check_no_duplicates($registry, 'no ID issued twice by any server');

done_testing();
