
# Copyright (c) 2026, snowflake contributors

# Eight pgbench clients insert rows whose primary key defaults to
# snowflake_nextval() for ten seconds.  Every insert must succeed, every ID
# must be distinct, and within each connection the IDs must strictly increase
# in the order the rows were inserted.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = snowflake_node('load', worker_id => 1);
$node->start;

my $started = $node->safe_psql('postgres', 'SELECT now()');

# "ord" is filled from a sequence by the same INSERT; within one session it
# follows the order of the inserts, which is all it is used for.  Across
# sessions it says nothing about the order IDs were assigned in.
$node->safe_psql(
	'postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE t (
		id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
		ord bigserial,
		backend int NOT NULL DEFAULT pg_backend_pid(),
		client int NOT NULL
	);
});

my $bench = run_pgbench(
	$node,
	"INSERT INTO t (client) VALUES (:client_id);\n",
	'-c' => 8,
	'-j' => 2,
	'-T' => 10);

is($bench->{exit}, 0, 'pgbench exits with status 0');
is($bench->{stderr}, '', 'pgbench reports no errors on stderr');
is($bench->{failed}, 0, 'pgbench reports no failed transactions');
ok(defined $bench->{processed} && $bench->{processed} > 0,
	'pgbench reports processed transactions');

my ($rows, $distinct) = split /\|/,
  $node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM t');
is($rows, $bench->{processed},
	'one row per transaction pgbench reported processed');
is($distinct, $rows, 'every ID is distinct');

is( $node->safe_psql(
		'postgres',
		'SELECT count(DISTINCT backend), count(DISTINCT client), '
		  . 'count(DISTINCT (backend, client)) FROM t'),
	'8|8|8',
	'each of the 8 clients inserted through one connection of its own');

check_strictly_increasing($node, 't', 'backend', 'ord',
	'within each connection, in insertion order');

# The IDs carry this server's worker id and a time during the run.
is( $node->safe_psql(
		'postgres', qq{
		SELECT count(*)
		FROM t, snowflake_parse(id) p
		WHERE p.worker_id <> 1
		   OR p.created_at < date_trunc('milliseconds', '$started'::timestamptz)
		   OR p.created_at > now()}),
	'0',
	'every ID parses to worker 1 and a time during the run');

check_no_crash($node, 'after the load');

$node->stop;
done_testing();
