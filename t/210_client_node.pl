
# Copyright (c) 2026, snowflake contributors

# Real JavaScript clients: node-postgres, knex and Drizzle, at the exact
# versions of t/clients/node/package-lock.json, installed with `npm ci` into
# a temporary directory (npm's own cache makes later runs fast), run
# t/clients/node/clients.js against a cluster.
#
# "safe" uses the settings docs/clients.md gives: node-postgres and knex
# return IDs as strings (or node-postgres, with a type parser for int8 on
# one pool, as BigInt), Drizzle's bigint in mode "bigint" as BigInt, JSON
# through a BigInt replacer, and the SQL-side remedies (id::text inside
# json_build_object, snowflake_encode).  Every ID must come back exactly as
# the database holds it, and looking a row up by it must find that row.
#
# "trapped" uses what the guide warns against: Drizzle's mode "number",
# pg.defaults.parseInt8, and json_build_object / row_to_json parsed into
# Numbers.  The IDs are above 2^53, so these must come back wrong, collapse
# into fewer values than rows, and miss rows when looked up: proof that
# the test would see the trap if the safe settings fell into it.
#
# "type" uses the column type snowflake: node-postgres and knex return it as
# a string (even with parseInt8), lookups by it find their rows, Buffer
# parameters carry bigint's eight bytes (a negative one refused), and PostgREST's query shape, coalesce(json_agg(...), '[]'),
# parsed with JSON.parse, has every ID exact, where the same query over a
# bigint key does not.
#
# All comparisons are made in SQL, on the exact decimal values the client
# printed.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# node: $NODE, then Debian's (so that every suite's root runs the same
# package), then the first on PATH.  The versions pinned in package.json
# need node 18 (Debian 12) or later.  npm: $NPM, the npm next to that node,
# then the first on PATH.
my $node_bin = first_program([ $ENV{NODE}, '/usr/bin/node', 'node' ],
	'-e', 'process.exit(+process.versions.node.split(".")[0] >= 18 ? 0 : 1)');
skip_all_unless(defined $node_bin, 'needs node 18 or later (Debian: nodejs)');
my $npm_bin = first_program(
	[ $ENV{NPM}, ($node_bin =~ m{^(.*/)node$} ? "$1npm" : ()), 'npm' ],
	'--version');
skip_all_unless(defined $npm_bin, 'needs npm (Debian: npm)');
note "node: $node_bin, npm: $npm_bin";

# The client program and its packages, in a directory of their own.  npm
# keeps its cache in ~/.npm, or in that directory if home is not writable.
my $app = PostgreSQL::Test::Utils::tempdir('node');
copy_tree("$FindBin::RealBin/clients/node", $app);
my %npm_env = (npm_config_update_notifier => 'false');
$npm_env{npm_config_cache} = "$app/npm-cache"
  unless defined $ENV{npm_config_cache}
  || (defined $ENV{HOME} && -d $ENV{HOME} && -w $ENV{HOME});
my ($installed, $npm_out, $npm_err) = run_program($app, \%npm_env,
	$npm_bin, 'ci', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts');
note "npm ci:\n$npm_out$npm_err";
skip_all_unless($installed,
	"npm ci of t/clients/node failed (is the npm registry reachable?): $npm_err");

my $node = snowflake_node('node', worker_id => 1);
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE clients');
my $started = $node->safe_psql('clients', 'SELECT now()');

# Run clients.js in a mode; return its output.
sub run_clients
{
	my ($mode) = @_;
	my ($ok, $out, $err) = run_program(
		$app,
		{
			PGHOST => $node->host,
			PGPORT => $node->port,
			PGDATABASE => 'clients',
			PGUSER => $node->safe_psql('postgres', 'SELECT current_user')
		},
		$node_bin, 'clients.js', $mode);
	ok($ok, "clients.js $mode succeeds") or diag($err);
	is($err, '', "clients.js $mode writes nothing to stderr");
	return $out;
}

my $safe = run_clients('safe');
my $trapped = run_clients('trapped');
my $type = run_clients('type');

# What the clients printed, into tables.
my (@returned, @lookups);
for my $run ([ safe => $safe ], [ trapped => $trapped ], [ type => $type ])
{
	my ($mode, $out) = @$run;
	push @returned, map { my @f = split / /; "('$mode', '$f[0]', '$f[1]', $f[2], '$f[3]')" }
	  $out =~ /^returned ([\w-]+ [\w-]+ \d+ \w+)$/mg;
	push @lookups, map { my @f = split / /; "('$mode', '$f[0]', '$f[1]', '$f[2]')" }
	  $out =~ /^lookup ([\w-]+ [\w-]+ [\w-]+)$/mg;
}
$node->safe_psql(
	'clients', qq{
	CREATE TABLE returned (mode text, client text, note text, got numeric, type text);
	INSERT INTO returned VALUES @{[ join(', ', @returned) ]};
	CREATE TABLE lookups (mode text, client text, note text, found text);
	INSERT INTO lookups VALUES @{[ join(', ', @lookups) ]};
	CREATE VIEW made AS SELECT id, note FROM orders UNION ALL SELECT id, note FROM items;
	CREATE VIEW made_typed AS
	    SELECT id, note FROM typed_orders UNION ALL SELECT id, note FROM bigint_orders;
});

# The schema the knex migration and the Drizzle section made.
like($safe, qr/^rollback leaves extensions 0$/m,
	'knex: rolling the migration back drops the extension');
is(column_defaults($node, 'clients', [ 'orders', 'items' ], ['id']),
	'items.id bigint snowflake_nextval(), orders.id bigint snowflake_nextval()',
	'the tables have bigint keys defaulting to snowflake_nextval()');

# Above 2^53, where a JavaScript Number cannot hold every integer: otherwise
# the trapped run could not show anything.
is( $node->safe_psql(
		'clients', qq{
		SELECT count(*), count(DISTINCT id), bool_and(id > 9007199254740991),
		       bool_and(snowflake_to_timestamptz(id)
		                BETWEEN date_trunc('milliseconds', '$started'::timestamptz) AND now())
		  FROM made}),
	'300|300|t|t',
	'300 rows, distinct IDs above 2^53, all made during the run');

# The documented settings: every ID exact, every lookup finds its row.
is( $node->safe_psql(
		'clients', q{
		SELECT client, count(*), count(*) FILTER (WHERE r.got = t.id),
		       string_agg(DISTINCT type, ',')
		  FROM returned r LEFT JOIN made t USING (note)
		 WHERE mode = 'safe' GROUP BY client ORDER BY client}),
	join("\n",
		'base32|50|50|bigint',
		'drizzle|50|50|bigint',
		'drizzle-json|50|50|string',
		'json-text|50|50|string',
		'knex|50|50|string',
		'pg|50|50|string',
		'pg-bigint|50|50|bigint'),
	'documented settings: every client returns every ID exactly (strings or BigInt)');
is( $node->safe_psql(
		'clients', q{
		SELECT client, count(*), count(*) FILTER (WHERE found = note)
		  FROM lookups WHERE mode = 'safe' GROUP BY client ORDER BY client}),
	"base32|50|50\ndrizzle|50|50\nknex|50|50\npg|50|50\npg-bigint|50|50",
	'documented settings: looking each row up by the returned ID finds that row');
like($safe, qr/^stringify drizzle-no-replacer TypeError$/m,
	'JSON.stringify without the replacer refuses BigInt IDs (it does not round them)');

# The traps: Numbers, wrong values, several IDs collapsed into one.
is( $node->safe_psql(
		'clients', q{
		SELECT client, count(*), string_agg(DISTINCT type, ','),
		       count(*) FILTER (WHERE r.got <> t.id) > 0,
		       count(DISTINCT r.got) < count(*)
		  FROM returned r JOIN made t USING (note)
		 WHERE mode = 'trapped' GROUP BY client ORDER BY client}),
	join("\n",
		'drizzle|50|number|t|t',
		'json_build_object|50|number|t|t',
		'pg|50|number|t|t',
		'row_to_json|50|number|t|t'),
	'trapped settings: IDs come back as Numbers, wrong, several rows sharing one');
is( $node->safe_psql(
		'clients', q{
		SELECT client, count(*), count(*) FILTER (WHERE found <> note) > 0
		  FROM lookups WHERE mode = 'trapped' GROUP BY client ORDER BY client}),
	"drizzle|50|t\npg|50|t",
	'trapped settings: looking rows up by the returned Numbers misses or finds other rows');

# The column type.
is(column_defaults($node, 'clients', ['typed_orders'], ['id']),
	'typed_orders.id snowflake snowflake_nextval()',
	'the type mode made a table keyed by the column type');
is( $node->safe_psql(
		'clients', q{
		SELECT count(*), count(DISTINCT id), bool_and(id > 9007199254740991) FROM made_typed}),
	'160|160|t',
	'160 rows (50 + 50 + 10 typed, 50 bigint), distinct IDs above 2^53');
is( $node->safe_psql(
		'clients', q{
		SELECT client, count(*), count(*) FILTER (WHERE r.got = t.id),
		       string_agg(DISTINCT type, ',')
		  FROM returned r LEFT JOIN made_typed t USING (note)
		 WHERE mode = 'type' AND client <> 'postgrest-bigint' GROUP BY client ORDER BY client}),
	join("\n",
		'postgrest-snowflake|50|50|string',
		'type-binary|10|10|bigint',
		'type-knex|50|50|string',
		'type-parseint8|50|50|string',
		'type-pg|50|50|string'),
	'the column type: node-postgres and knex return strings, parseInt8 or not, binary '
	  . 'parameters write the exact value, and PostgREST\'s JSON keeps every ID exact');
is( $node->safe_psql(
		'clients', q{
		SELECT count(*), string_agg(DISTINCT type, ','),
		       count(*) FILTER (WHERE r.got <> t.id) > 0, count(DISTINCT r.got) < count(*)
		  FROM returned r JOIN made_typed t USING (note)
		 WHERE mode = 'type' AND client = 'postgrest-bigint'}),
	'50|number|t|t',
	'the same JSON over a bigint key: Numbers, wrong, several rows sharing one');
is( $node->safe_psql(
		'clients', q{
		SELECT client, count(*), count(*) FILTER (WHERE found = note)
		  FROM lookups WHERE mode = 'type' GROUP BY client ORDER BY client}),
	"type-knex|50|50\ntype-pg|50|50",
	'the column type: looking each row up by the returned string finds that row');
like($type, qr/^refused type-binary type-binary-negative 22003$/m,
	'a negative number sent in binary is refused (numeric_value_out_of_range)');

$node->stop;
done_testing();
