
# Copyright (c) 2026, snowflake contributors

# The column type snowflake in COPY's binary format, which is bigint's: a
# snowflake column copied out loads into a bigint column, a bigint column
# copied out loads into a snowflake column, and both files are the same
# bytes.  Binary input refuses a negative number, as text input does: a
# bigint file holding one does not load into a snowflake column, and
# nothing of it is kept.  The IDs are compared in SQL.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use File::Compare;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = snowflake_node('binary_copy', worker_id => 1);
$node->start;
my $dir = PostgreSQL::Test::Utils::tempdir;

$node->safe_psql(
	'postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE typed (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(), v text);
	INSERT INTO typed (v) SELECT 'made ' || g FROM generate_series(1, 1000) g;
	-- the ends of the range, and an ID above 2^53
	INSERT INTO typed VALUES (0, 'zero'), (9223372036854775807, 'largest'),
	                         (250592571728859136, 'above 2^53');
	CREATE TABLE plain (id bigint PRIMARY KEY, v text);
	CREATE TABLE typed_again (LIKE typed);
});

# snowflake -> file -> bigint
$node->safe_psql('postgres',
	"COPY (SELECT * FROM typed ORDER BY id) TO '$dir/typed.bin' WITH (FORMAT binary)");
$node->safe_psql('postgres',
	"COPY plain FROM '$dir/typed.bin' WITH (FORMAT binary)");
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*), count(*) FILTER (WHERE p.id = t.id AND p.v = t.v)
		  FROM typed t FULL JOIN plain p ON p.id = t.id}),
	'1003|1003',
	'a snowflake column copied out in binary loads into a bigint column, every value exact');

# bigint -> file: the same bytes; file -> snowflake
$node->safe_psql('postgres',
	"COPY (SELECT * FROM plain ORDER BY id) TO '$dir/plain.bin' WITH (FORMAT binary)");
is(compare("$dir/typed.bin", "$dir/plain.bin"),
	0, 'the binary COPY of the snowflake column and of the bigint column are the same bytes');
$node->safe_psql('postgres',
	"COPY typed_again FROM '$dir/plain.bin' WITH (FORMAT binary)");
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*), count(*) FILTER (WHERE a.id = t.id AND a.v = t.v),
		       bool_and(to_json(a.id)::text = '"' || a.id::text || '"')
		  FROM typed t FULL JOIN typed_again a ON a.id = t.id}),
	'1003|1003|t',
	'a bigint column copied out in binary loads into a snowflake column, a JSON string again');

# A negative bigint in the file: refused, the whole COPY with it.
$node->safe_psql(
	'postgres', qq{
	INSERT INTO plain VALUES (-1, 'negative');
	COPY (SELECT * FROM plain ORDER BY id) TO '$dir/negative.bin' WITH (FORMAT binary);
	TRUNCATE typed_again;
});
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	"COPY typed_again FROM '$dir/negative.bin' WITH (FORMAT binary)");
isnt($ret, 0, 'binary COPY of a negative number into a snowflake column fails');
like(
	$stderr,
	qr/ERROR:  value -1 is out of range for type snowflake\n.*DETAIL:  A snowflake is a bigint from 0 to 9223372036854775807: snowflake IDs are never negative\.\n.*HINT:  Keep negative numbers in a bigint column\.\n.*CONTEXT:  COPY typed_again, line 1, column id/s,
	'... saying which value, why, what to do, and where in the file');
is($node->safe_psql('postgres', 'SELECT count(*) FROM typed_again'),
	'0', '... and loads none of its rows');

$node->stop;
done_testing();
