# Copyright (c) 2026, snowflake contributors

# A fleet: three primaries with worker ids 1, 2 and 3 insert concurrently
# into the same table, whose primary key defaults to snowflake_nextval(), and
# an aggregator subscribes to all three with built-in logical replication
# into one table with the same primary key.  Every row must arrive without a
# single conflict, the IDs must carry all three worker ids, and ordered by ID
# the rows of the three servers must interleave by time.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $columns = q{
	id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
	node int NOT NULL,
	at timestamptz DEFAULT clock_timestamp()};

# The primaries.
my @primaries;
for my $n (1 .. 3)
{
	my $node = snowflake_node(
		"primary$n",
		worker_id => $n,
		init => { allows_streaming => 'logical' },
		conf => { shared_buffers => '16MB' });
	$node->start;
	$node->safe_psql(
		'postgres', qq{
		CREATE EXTENSION snowflake;
		CREATE TABLE events ($columns);
		CREATE PUBLICATION events_pub FOR TABLE events;
	});
	push @primaries, $node;
}

# The aggregator preloads snowflake (for snowflake_parse) but has no worker
# id: it never generates.  Its table has no default.
my $aggregator = snowflake_node(
	'aggregator',
	conf => {
		max_logical_replication_workers => 6,
		shared_buffers => '16MB'
	});
$aggregator->start;
$aggregator->safe_psql(
	'postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE events (
		id bigint PRIMARY KEY,
		node int NOT NULL,
		at timestamptz);
});
for my $n (1 .. 3)
{
	my $connstr = $primaries[ $n - 1 ]->connstr . ' dbname=postgres';
	$aggregator->safe_psql('postgres',
		"CREATE SUBSCRIPTION sub$n CONNECTION '$connstr' PUBLICATION events_pub"
	);
}
for my $n (1 .. 3)
{
	$aggregator->wait_for_subscription_sync($primaries[ $n - 1 ], "sub$n");
}

# pgbench against the three primaries at once.
my $tempdir = PostgreSQL::Test::Utils::tempdir;
my (@handles, @stdout, @stderr);
for my $n (1 .. 3)
{
	my $node = $primaries[ $n - 1 ];
	my $script = "$tempdir/insert_$n.sql";
	open my $fh, '>', $script or die "could not write $script: $!";
	print $fh "INSERT INTO events (node) VALUES ($n);\n";
	close $fh or die "could not close $script: $!";

	($stdout[$n], $stderr[$n]) = ('', '');
	push @handles,
	  IPC::Run::start(
		[
			$node->installed_command('pgbench'), '-n',
			'-c', '2', '-T', '5', '-f', $script,
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$stdout[$n], '2>', \$stderr[$n]);
}
$_->finish for @handles;

my $total = 0;
for my $n (1 .. 3)
{
	my $node = $primaries[ $n - 1 ];
	note "pgbench on primary$n:\n$stdout[$n]$stderr[$n]";
	my ($processed) =
	  $stdout[$n] =~ /number of transactions actually processed: (\d+)/;
	my ($failed) = $stdout[$n] =~ /number of failed transactions: (\d+)/;
	is($stderr[$n], '', "primary$n: pgbench reports no errors");
	is($failed, 0, "primary$n: pgbench reports no failed transactions");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM events'),
		$processed, "primary$n: one row per transaction");
	cmp_ok($processed, '>', 0, "primary$n: rows were inserted");
	$total += $processed;
}

for my $n (1 .. 3)
{
	$primaries[ $n - 1 ]->wait_for_catchup("sub$n");
}

# Every row arrived, and the same rows: compare count and sum of IDs per node.
is($aggregator->safe_psql('postgres', 'SELECT count(*) FROM events'),
	$total, 'the aggregator has as many rows as the three primaries together');
for my $n (1 .. 3)
{
	my $query = "SELECT count(*), sum(id) FROM events WHERE node = $n";
	is($aggregator->safe_psql('postgres', $query),
		$primaries[ $n - 1 ]->safe_psql('postgres', $query),
		"the aggregator has exactly the rows of primary$n");
}

# No conflict ever occurred.
unlike(
	slurp_file($aggregator->logfile),
	qr/duplicate key|conflict/,
	'the aggregator logged no key conflict');
# (sync errors: sync_error_count up to 18, sync_table_error_count and
# sync_seq_error_count from 19 on; their sum is read on every major)
is( $aggregator->safe_psql(
		'postgres', q{
		SELECT string_agg(subname || ':' || apply_error_count || '/'
						  || (SELECT sum(value::bigint) FROM jsonb_each_text(to_jsonb(s))
							   WHERE key LIKE 'sync%error_count'),
						  ',' ORDER BY subname)
		  FROM pg_stat_subscription_stats AS s}),
	'sub1:0/0,sub2:0/0,sub3:0/0',
	'no apply or sync error in any subscription');

# The IDs carry the three worker ids, each row its own server's.
is( $aggregator->safe_psql(
		'postgres', q{
		SELECT string_agg(DISTINCT p.worker_id::text, ','),
		       count(*) FILTER (WHERE p.worker_id <> e.node)
		  FROM events e, snowflake_parse(e.id) p}),
	'1,2,3|0',
	'snowflake_parse on the aggregator shows worker ids 1, 2 and 3, each on its own rows');

# Ordered by ID, the servers' rows interleave: the node changes from row to
# row many times, not just twice as three blocks would.
my $changes = $aggregator->safe_psql(
	'postgres', q{
	SELECT count(*) FROM (SELECT node, lag(node) OVER (ORDER BY id) AS prev
	                        FROM events) s
	 WHERE node <> prev});
note "node changes along the IDs: $changes";
cmp_ok($changes, '>=', 100, 'ordered by ID, the three servers interleave');

# ... by time: the three runs overlapped, and every ID's timestamp is the
# moment its row was inserted (to the millisecond, give or take a borrowed one).
is( $aggregator->safe_psql(
		'postgres', q{
		SELECT max(first) < min(last)
		  FROM (SELECT min(at) AS first, max(at) AS last FROM events GROUP BY node) r}),
	't',
	'the three servers inserted during the same time');
is( $aggregator->safe_psql(
		'postgres', q{
		SELECT count(*) FROM events e, snowflake_parse(e.id) p
		 WHERE abs(extract(epoch FROM p.created_at - e.at)) > 0.5}),
	'0',
	'every ID carries the time its row was inserted');

# The aggregator never generated an ID.
is( $aggregator->safe_psql(
		'postgres',
		'SELECT worker_id IS NULL, ids_issued FROM snowflake_stats'),
	't|0',
	'the aggregator has no worker id and issued no ID');

$aggregator->stop;
$_->stop for @primaries;
done_testing();
