
# Copyright (c) 2026, snowflake contributors

# Worker ids are recycled: with snowflake.worker_bits = 2 there are 4 ids,
# and 12 server lifetimes run through one registry.  Each lifetime is a new
# server with a new data directory, copied from one image that never ran
# (like containers started from one image): no lease file, no mark, nothing
# that remembers an earlier ID; only the registry's fence keeps its IDs
# apart from those of the servers that held its worker id before.  To make
# sure of that, each server's clock is 5 minutes behind the clock of the
# server whose worker id it takes (libfaketime; snowflake.max_drift lets it
# run ahead to the fence).
#
# Four servers take the four ids.  Then, eight times: a new server starts
# while all four ids are held and is refused ("every snowflake worker id is
# held", in snowflake_stats.lease_error and in the error of
# snowflake_nextval()); the oldest running server stops, cleanly and
# immediately in turn; the new server takes its worker id, at once after a
# clean stop (the lease was released), only after the lease lapsed after an
# immediate one (checked on the registry's clock), and issues IDs.  The
# servers hold leases of 1 minute, which a loaded machine cannot make lapse
# by delaying renewals; a server about to stop immediately first renews for
# 2 s, so that its lease lapses soon after.
#
# At the end: no exhaustion (every lifetime got a worker id, the registry
# has four rows), no ID issued twice across all lifetimes, and under each
# worker id every holder's IDs are above all of its predecessors'.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

need_libfaketime();

my $lifetimes = 12;
my $ids_per_lifetime = 500;

my $registry = registry_node('registry');

# the image every server starts from
my $image = lease_node(
	'image', $registry,
	init => { extra => ['--wal-segsize=1'] },
	conf => {
		'snowflake.worker_bits' => 2,
		'snowflake.lease_time' => '1min',
		'snowflake.max_drift' => '20min'
	});
$image->backup_fs_cold('image');

# Lifetime n: its clock is 5 minutes behind for each 4 lifetimes before it,
# as lifetime n takes the worker id of lifetime n - 4.
sub new_server
{
	my ($n) = @_;
	my $node = PostgreSQL::Test::Cluster->new(sprintf('life%02d', $n));

	$node->init_from_backup($image, 'image');
	start_with_fake_clock($node, sprintf('%+d', -300 * int(($n - 1) / 4)));
	add_ids_table($node);
	return $node;
}

# The first four take the four ids.
my @running;
foreach my $n (1 .. 4)
{
	my $node = new_server($n);

	wait_for_lease($node, 'held');
	issue_ids($node, 1, $ids_per_lifetime);
	push @running, $node;
}
is( join(',', sort map { lease_stats($_, 'worker_id') } @running),
	'0,1,2,3', 'the first four servers hold the four worker ids');

# Then each new server replaces the oldest.
my $takeovers_after_lapse = 0;
foreach my $n (5 .. $lifetimes)
{
	my $node = new_server($n);
	my $name = $node->name;
	my $old = shift @running;
	my $old_name = $old->name;
	my $mode = $n % 2 ? 'immediate' : 'fast';
	my $worker = lease_stats($old, 'worker_id');

	wait_for_lease($node, 'refused', 'every snowflake worker id is held');
	if ($n == 5)
	{
		like(
			lease_stats($node, 'lease_error'),
			qr/could not take a worker id: the registry refused: every snowflake worker id is held\. All 4 worker ids of 2 worker bits are leased by running servers or registered by hand; the first lease lapses at .* Servers that stopped cleanly free their worker ids at once/,
			"$name, a fifth server: lease_error says every worker id is held");
		my $err = psql_fails_like($node, 'SELECT snowflake_nextval()',
			qr/ERROR:  this server has no snowflake worker id yet/,
			"$name, a fifth server: snowflake_nextval()");
		like($err, qr/DETAIL:  .*every snowflake worker id is held/,
			"$name, a fifth server: the error says every worker id is held");
	}
	is(lease_stats($node, 'worker_id IS NULL, ids_issued'),
		't|0', "$name: no worker id and no ID while every worker id is held");

	is(collect_ids($old, $registry), $ids_per_lifetime, "$old_name: IDs collected");

	# The new server's keeper waits (SIGSTOP) while the old server stops, so
	# that the registry's row still shows when the old lease lapses.
	my $keeper = keeper_pid($node);
	kill 'STOP', $keeper or die "could not stop the lease keeper of $name: $!";
	shorten_lease($old, $registry) if $mode eq 'immediate';
	$old->stop($mode);
	my $expires = lease_row($registry, $worker, 'lease_expires');
	kill 'CONT', $keeper or die "could not continue the lease keeper of $name: $!";

	# The new server's keeper retries a refused claim after up to 5 s; once
	# the lease is free (released, or lapsed on the registry's clock), a
	# reload wakes it to claim at once, unless a retry took it already.
	$registry->poll_query_until('postgres',
		"SELECT lease_expires <= now() OR host = '$name' FROM snowflake.workers WHERE worker_id = $worker"
	) or die "timed out waiting for the lease of worker id $worker to end";
	$node->reload;
	wait_for_lease($node, 'held');
	is(lease_stats($node, 'worker_id'), $worker,
		"$name takes worker id $worker of $old_name, stopped ($mode)");
	if ($mode eq 'immediate')
	{
		is(lease_row($registry, $worker, "held_since >= '$expires'"),
			't', "$name: only once $old_name\'s lease had lapsed");
		$takeovers_after_lapse++;
	}
	issue_ids($node, 1, $ids_per_lifetime);
	push @running, $node;
}
is($takeovers_after_lapse, ($lifetimes - 4) / 2,
	'half of the takeovers followed an immediate stop');

foreach my $node (@running)
{
	is(collect_ids($node, $registry), $ids_per_lifetime, $node->name . ': IDs collected');
}
is($registry->safe_psql('postgres', 'SELECT count(*), count(DISTINCT server) FROM ids'),
	$lifetimes * $ids_per_lifetime . "|$lifetimes",
	"$lifetimes lifetimes issued their IDs: no exhaustion");
is( $registry->safe_psql(
		'postgres',
		'SELECT count(*), max(worker_id), count(*) FILTER (WHERE lease_expires > now()) FROM snowflake.workers'
	),
	'4|3|4',
	'the registry has one row per worker id, the four held by the running servers');
check_no_duplicates($registry, "no ID issued twice across $lifetimes lifetimes");

# Each holder of a worker id (servers named in the order they started) is
# above all of the holders before it.
is( $registry->safe_psql(
		'postgres', q{
		SELECT count(prev_max), count(*) FILTER (WHERE first_id <= prev_max)
		  FROM (SELECT worker, server, min(id) AS first_id,
		               lag(max(id)) OVER (PARTITION BY worker ORDER BY server) AS prev_max
		          FROM ids GROUP BY worker, server) s}),
	($lifetimes - 4) . '|0',
	'under each worker id, every holder\'s IDs are above all of the earlier holders\'');

done_testing();
