
# Copyright (c) 2026, snowflake contributors

# Logical replication of tables keyed by the column type snowflake: a
# publisher (worker 1) and three subscribers, which preload the library but
# have no worker id and never generate: one with the same tables in text
# format, one in binary format (the type's send and receive, for the changes
# and, from PostgreSQL 16, for the initial copy too), and one whose columns
# are bigint, in binary format, as an aggregator that kept bigint keys would
# (the type's binary form is bigint's).  Rows copied at
# subscription, then inserts, updates and deletes found by the snowflake
# primary key (the replica identity), all arrive: the same rows everywhere,
# no apply error, and the subscribers' columns keep their types.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $tables = q{
	CREATE TABLE orders (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(),
	                     note text NOT NULL);
	CREATE TABLE lines (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(),
	                    order_id snowflake NOT NULL
	                        REFERENCES orders ON UPDATE CASCADE ON DELETE CASCADE,
	                    qty int NOT NULL);
};

my $publisher = snowflake_node(
	'publisher',
	worker_id => 1,
	init => { allows_streaming => 'logical' },
	conf => { shared_buffers => '16MB' });
$publisher->start;
$publisher->safe_psql(
	'postgres', qq{
	CREATE EXTENSION snowflake;
	$tables
	CREATE PUBLICATION shop FOR TABLE orders, lines;
	-- rows the subscribers copy when they subscribe
	WITH o AS (INSERT INTO orders (note) SELECT 'before ' || g FROM generate_series(1, 200) g
	           RETURNING id)
	INSERT INTO lines (order_id, qty) SELECT id, 1 FROM o;
});

# name => [ table definitions, subscription options ]
my %subscribers = (
	text => [ $tables, 'binary = false' ],
	binary => [ $tables, 'binary = true' ],
	bigint => [ $tables =~ s/\bsnowflake\b(?!_)/bigint/gr, 'binary = true' ],);
my %node;
for my $name (sort keys %subscribers)
{
	my ($definitions, $options) = @{ $subscribers{$name} };
	$node{$name} = snowflake_node("sub_$name", conf => { shared_buffers => '16MB' });
	$node{$name}->start;
	$node{$name}->safe_psql('postgres', "CREATE EXTENSION snowflake; $definitions");
	$node{$name}->safe_psql('postgres',
		    "CREATE SUBSCRIPTION sub_$name CONNECTION '"
		  . $publisher->connstr
		  . " dbname=postgres' PUBLICATION shop WITH ($options)");
	$node{$name}->wait_for_subscription_sync($publisher, "sub_$name");
}
is( join(' ',
		map { "$_:" . $node{$_}->safe_psql('postgres', 'SELECT count(*) FROM orders') }
		  sort keys %node),
	'bigint:200 binary:200 text:200',
	'every subscriber copied the rows there were when it subscribed');

# Changes after subscribing: inserts, updates of other columns and of the
# key (cascading to lines), and deletes (cascading too), each found by the
# snowflake key.
$publisher->safe_psql(
	'postgres', q{
	WITH o AS (INSERT INTO orders (note) SELECT 'after ' || g FROM generate_series(1, 300) g
	           RETURNING id)
	INSERT INTO lines (order_id, qty) SELECT id, 2 FROM o;
	UPDATE orders SET note = note || ' changed' WHERE id IN (SELECT id FROM orders ORDER BY id LIMIT 50);
	UPDATE lines SET qty = qty + 10 WHERE order_id IN (SELECT id FROM orders ORDER BY id DESC LIMIT 50);
	UPDATE orders SET id = snowflake_nextval()
	 WHERE id IN (SELECT id FROM orders ORDER BY id LIMIT 10 OFFSET 100);
	UPDATE lines SET id = snowflake_nextval() WHERE id IN (SELECT id FROM lines ORDER BY id LIMIT 10);
	DELETE FROM orders WHERE id IN (SELECT id FROM orders ORDER BY id LIMIT 25 OFFSET 200);
});
$publisher->wait_for_catchup("sub_$_") for sort keys %node;

# The same rows everywhere, compared as text so that bigint and snowflake
# columns compare alike.
my $rows = q{
	SELECT count(*), md5(string_agg(format('%s %s %s', o.id, o.note, l.qty), ',' ORDER BY o.id, l.id))
	  FROM orders o LEFT JOIN lines l ON l.order_id = o.id};
my $expected = $publisher->safe_psql('postgres', $rows);
like($expected, qr/^475\|/, 'the publisher has 475 orders left, with their lines');
for my $name (sort keys %node)
{
	is($node{$name}->safe_psql('postgres', $rows),
		$expected, "subscriber $name has exactly the publisher's rows");
	is( $node{$name}->safe_psql(
			'postgres', q{
			SELECT string_agg(format('%s.%s %s', c.relname, a.attname,
			                         format_type(a.atttypid, a.atttypmod)), ', '
			                  ORDER BY c.relname, a.attname)
			  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
			 WHERE c.relname IN ('orders', 'lines') AND a.attname IN ('id', 'order_id')}),
		$name eq 'bigint'
		? 'lines.id bigint, lines.order_id bigint, orders.id bigint'
		: 'lines.id snowflake, lines.order_id snowflake, orders.id snowflake',
		"subscriber $name keeps its column types");
}

# JSON on the subscribers: strings where the column type arrived, numbers
# where bigint columns received the same values.
my $json = q{SELECT json_agg(id ORDER BY id)::text LIKE '["%' FROM orders};
is(join(' ', map { "$_:" . $node{$_}->safe_psql('postgres', $json) } sort keys %node),
	'bigint:f binary:t text:t',
	'the subscribers with the column type write the IDs as JSON strings');

# No subscriber applied anything with an error, or generated an ID.
for my $name (sort keys %node)
{
	is( $node{$name}->safe_psql(
			'postgres', q{
			SELECT apply_error_count, ids_issued
			  FROM pg_stat_subscription_stats, snowflake_stats}),
		'0|0',
		"subscriber $name: no apply error, no ID generated");
	unlike(slurp_file($node{$name}->logfile),
		qr/ERROR|conflict/, "subscriber $name logged no error");
}

$_->stop for values %node;
$publisher->stop;
done_testing();
