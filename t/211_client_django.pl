
# Copyright (c) 2026, snowflake contributors

# A real Django project, with whatever python3-django is installed, built
# from t/clients/django in a temporary directory: makemigrations writes the
# model migration after the hand-written one that creates the extension;
# migrate applies both, migrating back to zero removes the tables and the
# extension, and migrate applies them again.  A second app, legacy, has a
# table created with Django's own BigAutoField and rows in it before its
# migration 0002 moves it to snowflake keys with snowflake_migrate(),
# reversibly.  t/clients/django/run.py then
# inserts through the ORM and prints the keys Django read back, checked
# here in SQL.  Last, Django's test runner, as an application role that may
# create databases but not extensions, creates its test database from
# template1, which has the extension, and runs shop/tests.py there.
#
# The models follow docs/clients.md for the running version: a db_default
# key from Django 5.0 on, the SnowflakeAutoField custom field before (and,
# for one model, on every version).

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# The first Python that has both modules: $PYTHON, python3 on PATH (which
# may be a pyenv or venv without them), then Debian's own.
my $python = first_program([ $ENV{PYTHON}, 'python3', '/usr/bin/python3' ],
	'-c', 'import django, psycopg2');
skip_all_unless(defined $python,
	'needs python3 with django and psycopg2 (Debian: python3-django python3-psycopg2)');

my $project = PostgreSQL::Test::Utils::tempdir('django');
copy_tree("$FindBin::RealBin/clients/django", $project);

my $node = snowflake_node('django', worker_id => 1);
$node->start;
my $superuser = $node->safe_psql('postgres', 'SELECT current_user');
$node->safe_psql('postgres', 'CREATE DATABASE shop');

# Run manage.py's commands or a script in the
# project, connected to database shop as $user; return stdout, or fail.
sub django
{
	my ($user, $test_name, @command) = @_;
	my ($ok, $out, $err) = run_program(
		$project,
		{
			PGHOST => $node->host,
			PGPORT => $node->port,
			PGDATABASE => 'shop',
			PGUSER => $user,
			PYTHONDONTWRITEBYTECODE => '1'
		},
		$python, @command);
	ok($ok, $test_name) or diag("stdout:\n$out\nstderr:\n$err");
	return wantarray ? ($out, $err) : $out;
}

my @manage = ('manage.py');

my ($version) =
  django($superuser, 'python3 imports django', '-c',
	'import django; print("%d.%d" % django.VERSION[:2])') =~ /^(\d+\.\d+)$/m;
my $db_default = $version >= 5.0;
note "Django $version: keys declared with "
  . ($db_default ? 'db_default' : 'SnowflakeAutoField');

# The migrations.
my $made = django($superuser, 'makemigrations succeeds',
	@manage, 'makemigrations', 'shop');
like($made, qr/Create model Customer.*Create model Order.*Create model Item/s,
	'makemigrations writes the models\' migration');
my ($migration) = glob("$project/shop/migrations/0002_*.py");
my $migration_text = defined $migration ? slurp_file($migration) : '';
like($migration_text, qr/dependencies = \[\s*\('shop', '0001_snowflake'\),\s*\]/,
	'the models\' migration comes after the extension\'s');
like(
	$migration_text,
	$db_default
	? qr/\('id', models\.BigIntegerField\(db_default=models\.Func\(function='snowflake_nextval'/
	: qr/\('id', shop\.fields\.SnowflakeAutoField\(/,
	'the migration declares the key as documented for this version');

# The legacy app's table as Django makes a BigAutoField, with two rows.
django($superuser, 'the legacy table is created', @manage, 'migrate', 'legacy', '0001');
$node->safe_psql('shop', "INSERT INTO legacy_ticket (note) VALUES ('old-1'), ('old-2')");
# The legacy table's key, and the shop's keys, as column_defaults shows them.
sub legacy_key
{
	return column_defaults($node, 'shop', ['legacy_ticket'], ['id']);
}
my $legacy_key = legacy_key();
like($legacy_key,
	$version >= 4.1
	? qr/^legacy_ticket\.id bigint no default identity$/
	: qr/^legacy_ticket\.id bigint nextval\('legacy_ticket_id_seq'::regclass\)$/,
	"Django $version makes a BigAutoField key "
	  . ($version >= 4.1 ? 'an identity column' : 'bigserial'));

django($superuser, 'migrate succeeds', @manage, 'migrate');
is(legacy_key(), 'legacy_ticket.id bigint snowflake_nextval()',
	'legacy migration 0002 moved the key to snowflake_nextval()');
is($node->safe_psql('shop', "SELECT string_agg(id || ' ' || note, ', ' ORDER BY id) FROM legacy_ticket"),
	'1 old-1, 2 old-2', 'the rows from before keep their keys');
django($superuser, 'makemigrations --check finds the models and the migrations agree',
	@manage, 'makemigrations', '--check', '--dry-run');

sub shop_keys
{
	return column_defaults($node, 'shop', [ 'shop_customer', 'shop_item', 'shop_order' ],
		[ 'id', 'customer_id', 'order_id' ]);
}
my $keys =
	'shop_customer.id bigint snowflake_nextval(), '
  . 'shop_item.id bigint snowflake_nextval(), '
  . 'shop_item.order_id bigint no default, '
  . 'shop_order.customer_id bigint no default, '
  . 'shop_order.id bigint snowflake_nextval()';
is(shop_keys(), $keys,
	'bigint keys defaulting to snowflake_nextval(), no identity, bigint foreign keys');

django($superuser, 'migrating back to zero succeeds',
	@manage, 'migrate', 'shop', 'zero');
is( $node->safe_psql(
		'shop', q{
		SELECT (SELECT count(*) FROM pg_class WHERE relname LIKE 'shop\_%'),
		       (SELECT count(*) FROM pg_extension WHERE extname = 'snowflake')}),
	'0|0',
	'migrating back removes the tables and the extension');
is(legacy_key(), $legacy_key,
	'migrating back (legacy 0002 first, which depends on the extension) restores the legacy key');
django($superuser, 'migrate succeeds again', @manage, 'migrate');
is(shop_keys(), $keys, 'the same tables again');
is(legacy_key(), 'legacy_ticket.id bigint snowflake_nextval()',
	'the legacy key moved again');

# Inserts.
my $started = $node->safe_psql('shop', 'SELECT now()');
my $printed = django($superuser, 'run.py succeeds', 'run.py');
my @rows = map { my @f = split / /; "('$f[0]', '$f[1]', " . ($f[2] eq 'UNSET' ? 'NULL' : $f[2]) . ')' }
  $printed =~ /^((?:customer|order|item|ticket) [\w-]+ (?:\d+|UNSET))$/mg;
my @lookups = map { my @f = split / /; "('$f[0]', '$f[1]')" }
  $printed =~ /^lookup ([\w-]+ [\w-]+)$/mg;
$node->safe_psql(
	'shop', qq{
	CREATE TABLE returned (tbl text, note text, got bigint);
	INSERT INTO returned VALUES @{[ join(', ', @rows) ]};
	CREATE TABLE lookups (note text, found text);
	INSERT INTO lookups VALUES @{[ join(', ', @lookups) ]};
	CREATE VIEW made AS
	    SELECT 'customer' AS tbl, id, name AS note FROM shop_customer
	    UNION ALL SELECT 'order', id, note FROM shop_order
	    UNION ALL SELECT 'item', id, note FROM shop_item
	    UNION ALL SELECT 'ticket', id, note FROM legacy_ticket WHERE note LIKE 'ticket-%';
});

is( $node->safe_psql(
		'shop', qq{
		SELECT count(*), count(DISTINCT id),
		       bool_and((snowflake_parse(id)).worker_id = 1),
		       bool_and(snowflake_to_timestamptz(id)
		                BETWEEN date_trunc('milliseconds', '$started'::timestamptz) AND now())
		  FROM made}),
	'65|65|t|t',
	'65 rows with distinct keys from worker 1, made during the run');
is( $node->safe_psql(
		'shop', q{
		SELECT tbl, count(*), count(*) FILTER (WHERE r.got = m.id),
		       count(*) FILTER (WHERE r.got IS NULL)
		  FROM returned r JOIN made m USING (tbl, note)
		 WHERE tbl IN ('customer', 'item', 'ticket') GROUP BY tbl ORDER BY tbl}),
	"customer|20|20|0\nitem|20|20|0\nticket|5|5|0",
	'save() and bulk_create() with SnowflakeAutoField, and the migrated table, read back every key exactly');
my $orders = $node->safe_psql(
	'shop', q{
	SELECT count(*), count(*) FILTER (WHERE r.got = m.id), count(*) FILTER (WHERE r.got IS NULL)
	  FROM returned r JOIN made m USING (tbl, note) WHERE tbl = 'order'});
if ($db_default)
{
	# Django 5.0 to 5.2 leave a db_default key unset after bulk_create();
	# a later Django may read it back.  Either way, never a wrong key.
	like($orders, qr/^20\|(\d+)\|(\d+)$/, 'bulk_create() of db_default keys: 20 orders');
	my ($exact, $unset) = $orders =~ /\|(\d+)\|(\d+)$/;
	is($exact + $unset, 20,
		"bulk_create() with db_default: every key exact or left unset ($exact exact, $unset unset)");
}
else
{
	is($orders, '20|20|0', 'bulk_create() with SnowflakeAutoField reads back every key exactly');
}
is( $node->safe_psql(
		'shop', q{
		SELECT count(*), count(*) FILTER (WHERE found = note) FROM lookups}),
	$node->safe_psql('shop', 'SELECT count(got), count(got) FROM returned'),
	'every object read back by its key is the same row');
is( $node->safe_psql(
		'shop', q{
		SELECT count(*) FROM shop_item i JOIN shop_order o ON o.id = i.order_id
		  JOIN shop_customer c ON c.id = o.customer_id
		 WHERE replace(i.note, 'item', '') = replace(o.note, 'order', '')
		   AND replace(o.note, 'order', '') = replace(c.name, 'customer', '')}),
	'20',
	'every item and order references its parent by the key Django read back');

# Django's test runner as an application role that may create databases
# but not extensions: the extension comes from template1.
$node->safe_psql('postgres', 'CREATE ROLE app LOGIN CREATEDB');
$node->safe_psql('template1', 'CREATE EXTENSION snowflake');
my ($out, $err) = django('app', 'the test runner succeeds as a role that may not create extensions',
	@manage, 'test', 'shop', '--noinput');
like($err, qr/^Ran 1 test\b.*^OK$/ms, 'the test runner ran shop/tests.py and it passed');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_database WHERE datname = 'test_shop'"),
	'0', 'the test runner dropped its test database');

$node->stop;
done_testing();
