
# Copyright (c) 2026, snowflake contributors

# A real Active Record client, with whatever ruby-activerecord and ruby-pg
# are installed: t/clients/activerecord/app.rb, copied to a temporary
# directory, runs the migration (enable_extension, tables keyed by
# snowflake_nextval()) through ActiveRecord::Tasks as `rails db:migrate`
# does, dumps db/schema.rb as `db:schema:dump` does, and inserts through
# the models.  Then the round trip every Rails CI makes (db:schema:load,
# db:test:prepare): the dumped schema.rb is loaded into a fresh database,
# where the keys must keep working.
#
# The round trip is why the extension keeps its worker-id registry in a
# schema of its own: schema dumpers list every table of the schemas on the
# search path, extension members too, and a schema.rb that re-creates the
# registry with force: :cascade fails to load.  Active Record 7.1 and later
# also dump `create_schema "snowflake"` before enable_extension, which the
# extension must accept.  The workaround docs/clients.md gives for 1.2 and
# earlier (SchemaDumper.ignore_tables) must keep working too.
#
# Then the column type snowflake (extension 1.4): tables keyed by it, made
# with create_table id: :snowflake and t.references type: :snowflake, and
# models that declare their keys big integers (Active Record does not know
# the type: undeclared, it reads the key as a String).  schema.rb cannot
# describe the type, and says so; structure.sql can, and loads into a fresh
# database, where inserting works again.  The IDs are compared in SQL.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# $RUBY, then Debian's, then the first on PATH.
my $ruby = first_program([ $ENV{RUBY}, '/usr/bin/ruby', 'ruby' ],
	'-e', 'require "active_record"; require "pg"');
skip_all_unless(defined $ruby,
	'needs ruby with active_record and pg (Debian: ruby-activerecord ruby-pg)');

my $app = PostgreSQL::Test::Utils::tempdir('activerecord');
copy_tree("$FindBin::RealBin/clients/activerecord", $app);

my $node = snowflake_node('activerecord', worker_id => 1);
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE shop');
my $started = $node->safe_psql('postgres', 'SELECT now()');

my ($version) = (run_program(undef, {}, $ruby, '-e',
		'require "active_record"; puts ActiveRecord.version'))[1] =~ /^(\S+)$/m;
note "Active Record $version";

# Run app.rb; return (ok, stdout, stderr).
sub app
{
	my (@arguments) = @_;
	return run_program(
		$app,
		{
			PGHOST => $node->host,
			PGPORT => $node->port,
			PGUSER => $node->safe_psql('postgres', 'SELECT current_user')
		},
		$ruby, 'app.rb', @arguments);
}

# Check what app.rb printed for database $db: every ID it read back is the
# row's ID in the database, and every lookup by it found that row.
sub check_inserts
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($db, $out, $test_name) = @_;
	my @returned = map { my @f = split / /; "('$f[0]', '$f[2]', $f[1])" }
	  $out =~ /^((?:customer|order) \d+ [\w-]+)$/mg;
	my @lookups = map { my @f = split / /; "('$f[0]', '$f[1]')" }
	  $out =~ /^lookup ([\w-]+ [\w-]+)$/mg;

	is(scalar @returned, 20, "$test_name: 10 customers and 10 orders read back");
	return unless @returned;
	is( $node->safe_psql(
			$db, qq{
			CREATE TEMP TABLE returned (tbl text, note text, got bigint);
			INSERT INTO returned VALUES @{[ join(', ', @returned) ]};
			CREATE TEMP TABLE lookups (note text, found text);
			INSERT INTO lookups VALUES @{[ join(', ', @lookups) ]};
			CREATE TEMP VIEW made AS
			    SELECT 'customer' AS tbl, id, name AS note FROM customers
			    UNION ALL SELECT 'order', id, note FROM orders;
			SELECT (SELECT count(*) FROM returned r JOIN made m USING (tbl, note) WHERE r.got = m.id),
			       (SELECT count(*) FROM lookups WHERE found = note),
			       (SELECT count(DISTINCT id) FROM made),
			       (SELECT bool_and((snowflake_parse(id)).worker_id = 1
			                        AND snowflake_to_timestamptz(id)
			                            BETWEEN date_trunc('milliseconds', '$started'::timestamptz) AND now())
			          FROM made),
			       (SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id
			         WHERE substring(o.note from '\\d+\$') = substring(c.name from '\\d+\$'))}),
		'20|20|20|t|10',
		"$test_name: every ID exact, found again by lookup, from worker 1, made now; orders reference their customers"
	);
	return;
}

# Migrate, dump, insert.
my ($ok, $out, $err) = app('migrate', 'shop');
ok($ok, 'db:migrate, db:schema:dump and inserts succeed') or diag($err);
check_inserts('shop', $out, 'after the migration');
is(column_defaults($node, 'shop', [ 'customers', 'orders' ], [ 'id', 'customer_id' ]),
	'customers.id bigint snowflake_nextval(), orders.customer_id bigint no default, '
	  . 'orders.id bigint snowflake_nextval()',
	'the migration made bigint keys defaulting to snowflake_nextval()');

my $schema_rb = slurp_file("$app/db/schema.rb");
like($schema_rb, qr/^\s*enable_extension "snowflake"$/m, 'schema.rb enables the extension');
like(
	$schema_rb,
	qr/^\s*create_table "customers", id: :bigint, default: -> \{ "snowflake_nextval\(\)" \}/m,
	'schema.rb keeps the key\'s default');

# Is the extension's registry table where the dumper looks?
my $registry_visible = $node->safe_psql(
	'shop', q{
	SELECT count(*) > 0
	  FROM pg_depend d
	  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
	  JOIN pg_class c ON c.oid = d.objid AND d.classid = 'pg_class'::regclass
	 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	   AND c.relkind IN ('r', 'p')
	   AND c.relnamespace IN (SELECT oid FROM pg_namespace
	                           WHERE nspname = ANY (current_schemas(false)))}) eq 't';
ok(!$registry_visible, 'the extension has no table on the search path');
unlike($schema_rb, qr/snowflake_workers|create_table "workers"/,
	'schema.rb does not list the extension\'s registry');
note 'schema.rb creates the schema snowflake'
  if $schema_rb =~ /^\s*create_schema "snowflake"$/m;

# db:schema:load into a fresh database.
$node->safe_psql('postgres', 'CREATE DATABASE shop_loaded');
($ok, $out, $err) = app('load', 'shop_loaded');
ok($ok, 'db:schema:load into a fresh database succeeds') or diag($err);
check_inserts('shop_loaded', $out, 'after db:schema:load');

# The workaround docs/clients.md gives for extension 1.2 and earlier,
# whose registry was on the search path: leave it out of the dump.
($ok, $out, $err) = app('dump', 'shop', '--ignore-registry');
ok($ok, 'db:schema:dump with SchemaDumper.ignore_tables succeeds') or diag($err);
unlike(slurp_file("$app/db/schema.rb"), qr/snowflake_workers/,
	'with ignore_tables, schema.rb does not list the registry');
$node->safe_psql('postgres', 'CREATE DATABASE shop_workaround');
($ok, $out, $err) = app('load', 'shop_workaround');
ok($ok, 'with ignore_tables, db:schema:load into a fresh database succeeds') or diag($err);
check_inserts('shop_workaround', $out, 'after db:schema:load of the schema.rb dumped with ignore_tables');

# The column type: check what app.rb printed for database $db.
sub check_typed
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($db, $out, $test_name) = @_;
	my @returned = map { my @f = split / /; "('$f[0]', '$f[2]', $f[1])" }
	  $out =~ /^typed-((?:customer|order) \d+ [\w-]+)$/mg;
	my @references = map { my @f = split / /; "($f[0], $f[1])" }
	  $out =~ /^typed-reference (\d+ \d+)$/mg;
	my @lookups = map { my @f = split / /; "('$f[0]', '$f[1]')" }
	  $out =~ /^lookup ([\w-]+ [\w-]+)$/mg;

	is(scalar @returned, 20, "$test_name: 10 typed customers and 10 typed orders read back");
	return unless @returned && @references && @lookups;
	is( $node->safe_psql(
			$db, qq{
			CREATE TEMP TABLE returned (tbl text, note text, got bigint);
			INSERT INTO returned VALUES @{[ join(', ', @returned) ]};
			CREATE TEMP TABLE refs (order_id bigint, customer_id bigint);
			INSERT INTO refs VALUES @{[ join(', ', @references) ]};
			CREATE TEMP TABLE lookups (note text, found text);
			INSERT INTO lookups VALUES @{[ join(', ', @lookups) ]};
			CREATE TEMP VIEW made AS
			    SELECT 'customer' AS tbl, id, name AS note FROM typed_customers
			    UNION ALL SELECT 'order', id, note FROM typed_orders;
			SELECT (SELECT count(*) FROM returned r JOIN made m USING (tbl, note) WHERE r.got = m.id),
			       (SELECT count(*) FROM refs r JOIN typed_orders o ON o.id = r.order_id
			         WHERE o.typed_customer_id = r.customer_id),
			       (SELECT count(*) FROM lookups WHERE found = note),
			       (SELECT bool_and((snowflake_parse(id)).worker_id = 1
			                        AND snowflake_to_timestamptz(id)
			                            BETWEEN date_trunc('milliseconds', '$started'::timestamptz) AND now())
			          FROM made),
			       (SELECT string_agg(format('%s.%s %s', c.relname, a.attname,
			                                 format_type(a.atttypid, a.atttypmod)), ', '
			                          ORDER BY c.relname, a.attname)
			          FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
			         WHERE c.relname IN ('typed_customers', 'typed_orders')
			           AND a.attname IN ('id', 'typed_customer_id'))}),
		'20|10|20|t|typed_customers.id snowflake, typed_orders.id snowflake, '
		  . 'typed_orders.typed_customer_id snowflake',
		"$test_name: every ID and reference exact, found again by lookup, from worker 1, made now, "
		  . 'in columns of the type');
	like($out, qr/^class id String$/m,
		"$test_name: a model that does not declare its key reads it as a String");
	like($out, qr/^refused [\w-]+-negative 22003$/m,
		"$test_name: a negative key is refused (numeric_value_out_of_range)");
	return;
}

$node->safe_psql('postgres', 'CREATE DATABASE typed');
($ok, $out, $err) = app('type', 'typed');
ok($ok, 'the column type: create_table, inserts and both schema dumps succeed') or diag($err);
check_typed('typed', $out, 'the column type');
like(
	slurp_file("$app/db/schema.rb"),
	qr/^# Could not dump table "typed_customers" because of following StandardError\n#   Unknown type 'snowflake' for column 'id'$/m,
	'schema.rb cannot describe the column type, and says so');
like(
	slurp_file("$app/db/structure.sql"),
	qr/^    id public\.snowflake DEFAULT public\.snowflake_nextval\(\) NOT NULL,$/m,
	'structure.sql describes the column type and its default');

$node->safe_psql('postgres', 'CREATE DATABASE typed_loaded');
($ok, $out, $err) = app('type-load', 'typed_loaded');
ok($ok, 'the column type: loading structure.sql into a fresh database and inserts succeed')
  or diag($err);
check_typed('typed_loaded', $out, 'after loading structure.sql');

$node->stop;
done_testing();
