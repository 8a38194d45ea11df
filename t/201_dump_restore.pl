
# Copyright (c) 2026, snowflake contributors

# A database with migrated tables (bigserial, integer identity ALWAYS with a
# foreign key, widened), a table created with DEFAULT snowflake_nextval(),
# and tables keyed by the column type snowflake (with foreign keys from and
# to bigint columns) survives pg_dump and restore, plain (psql) and custom
# format (pg_restore), into a fresh cluster with another worker id: the
# defaults and column types come back, inserting works and gives IDs above
# every restored one, the column type is still a string in JSON, and the
# undo script saved in the database still works after the restore.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $source = snowflake_node('source', worker_id => 1);
$source->start;

$source->safe_psql('postgres', 'CREATE DATABASE app');
$source->safe_psql(
	'app', q{
	CREATE EXTENSION snowflake;

	CREATE TABLE accounts (id bigserial PRIMARY KEY, name text);
	INSERT INTO accounts (name) SELECT 'old ' || g FROM generate_series(1, 100) g;

	CREATE TABLE events (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, what text);
	CREATE TABLE event_tags (event_id integer REFERENCES events, tag text);
	INSERT INTO events (what) SELECT 'old ' || g FROM generate_series(1, 50) g;
	INSERT INTO event_tags SELECT id, 'tag' FROM events;

	CREATE TABLE native (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v text);
	INSERT INTO native (v) SELECT 'old ' || g FROM generate_series(1, 100) g;

	-- the column type: its key referencing a bigint key, and referenced
	-- by a bigint column
	CREATE TABLE typed (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(),
	                    native_id snowflake NOT NULL REFERENCES native, v text);
	INSERT INTO typed (native_id, v) SELECT id, 'old' FROM native ORDER BY id LIMIT 30;
	CREATE TABLE typed_notes (typed_id bigint NOT NULL REFERENCES typed, note text);
	INSERT INTO typed_notes SELECT id, 'old' FROM typed;

	-- keep the undo scripts with the data, as docs/migration.md advises
	CREATE TABLE snowflake_migration_log AS
		SELECT 'accounts' AS tbl, * FROM snowflake_migrate('accounts');
	INSERT INTO snowflake_migration_log
		SELECT 'events', * FROM snowflake_migrate('events', widen => true);

	INSERT INTO accounts (name) SELECT 'migrated ' || g FROM generate_series(1, 20) g;
	WITH e AS (INSERT INTO events (what) VALUES ('migrated') RETURNING id)
	INSERT INTO event_tags SELECT id, 'migrated' FROM e;
});

is( $source->safe_psql(
		'app', q{
		SELECT string_agg(format('%s=%s', c.relname, pg_get_expr(d.adbin, d.adrelid)), ' ' ORDER BY c.relname)
		  FROM pg_attrdef d JOIN pg_class c ON c.oid = d.adrelid
		 WHERE c.relname IN ('accounts', 'events', 'native')}),
	'accounts=snowflake_nextval() events=snowflake_nextval() native=snowflake_nextval()',
	'the source tables default to snowflake_nextval()');

my $dir = PostgreSQL::Test::Utils::tempdir;
my $plain = "$dir/app.sql";
my $custom = "$dir/app.dump";

$source->command_ok([ 'pg_dump', '-d', 'app', '-f', $plain ],
	'pg_dump, plain format');
$source->command_ok([ 'pg_dump', '-Fc', '-d', 'app', '-f', $custom ],
	'pg_dump, custom format');

my $text = slurp_file($plain);
like($text, qr/^CREATE EXTENSION IF NOT EXISTS snowflake WITH SCHEMA public;$/m,
	'the plain dump creates the extension');
# The sequences are no longer owned by the columns, so pg_dump writes the
# defaults inside CREATE TABLE.
for my $table ('accounts', 'events', 'native')
{
	like(
		$text,
		qr/^CREATE TABLE public\.$table \(\n    id bigint DEFAULT public\.snowflake_nextval\(\) NOT NULL,$/m,
		"the plain dump creates $table with DEFAULT snowflake_nextval()");
}
unlike($text, qr/^ALTER TABLE .* ADD GENERATED/m,
	'the migrated identity column is no identity in the dump');
like($text, qr/^CREATE SEQUENCE public\.accounts_id_seq$/m,
	'the plain dump keeps the detached sequence');
unlike($text, qr/^ALTER SEQUENCE public\.accounts_id_seq OWNED BY/m,
	'the detached sequence is owned by nothing');
unlike($text, qr/snowflake_stats|CREATE FUNCTION|CREATE TYPE|CREATE CAST/,
	'the dump holds no extension member objects');
like(
	$text,
	qr/^CREATE TABLE public\.typed \(\n    id public\.snowflake DEFAULT public\.snowflake_nextval\(\) NOT NULL,\n    native_id public\.snowflake NOT NULL,$/m,
	'the plain dump creates the table keyed by the column type, its default and its reference');

my $listing;
$source->command_ok([ 'pg_restore', '-f', "$dir/custom.sql", $custom ],
	'pg_restore lists the custom dump as SQL');
$listing = slurp_file("$dir/custom.sql");
like($listing, qr/^CREATE EXTENSION IF NOT EXISTS snowflake WITH SCHEMA public;$/m,
	'the custom dump creates the extension');
like($listing, qr/^    id bigint DEFAULT public\.snowflake_nextval\(\) NOT NULL,$/m,
	'the custom dump has the snowflake default');

$source->stop;

# A fresh cluster on the same machine, worker 2.
my $target = snowflake_node('target', worker_id => 2);
$target->start;

$target->safe_psql('postgres', 'CREATE DATABASE from_plain');
$target->safe_psql('postgres', 'CREATE DATABASE from_custom');
$target->command_ok(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', 'from_plain', '-f', $plain ],
	'psql restores the plain dump');
$target->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', 'from_custom', $custom ],
	'pg_restore restores the custom dump');

for my $db ('from_plain', 'from_custom')
{
	is( $target->safe_psql(
			$db, q{
			SELECT (SELECT count(*) FROM accounts), (SELECT count(*) FROM events),
			       (SELECT count(*) FROM event_tags), (SELECT count(*) FROM native),
			       (SELECT count(*) FROM snowflake_migration_log)}),
		'120|51|51|100|19',
		"$db: every row is back");
	is( $target->safe_psql(
			$db, q{
			SELECT (SELECT count(*) FROM typed), (SELECT count(*) FROM typed_notes),
			       (SELECT count(*) FROM typed t JOIN native n ON n.id = t.native_id),
			       (SELECT count(*) FROM typed_notes n JOIN typed t ON t.id = n.typed_id),
			       (SELECT string_agg(format_type(atttypid, atttypmod), ',' ORDER BY attnum)
			          FROM pg_attribute WHERE attrelid = 'typed'::regclass AND attname IN ('id', 'native_id')),
			       (SELECT bool_and(to_json(id)::text = '"' || id::text || '"') FROM typed)}),
		'30|30|30|30|snowflake,snowflake|t',
		"$db: the column type's rows, types and references are back, and JSON writes them as strings");

	$target->safe_psql(
		$db, q{
		CREATE TABLE restored AS
			SELECT 'accounts' AS tbl, max(id) AS max_id FROM accounts
			UNION ALL SELECT 'events', max(id) FROM events
			UNION ALL SELECT 'native', max(id) FROM native
			UNION ALL SELECT 'typed', max(id) FROM typed;
		INSERT INTO accounts (name) SELECT 'restored ' || g FROM generate_series(1, 10) g;
		WITH e AS (INSERT INTO events (what) VALUES ('restored') RETURNING id)
		INSERT INTO event_tags SELECT id, 'restored' FROM e;
		INSERT INTO native (v) SELECT 'restored ' || g FROM generate_series(1, 10) g;
		WITH t AS (INSERT INTO typed (native_id, v)
		           SELECT id, 'restored' FROM native WHERE v LIKE 'restored%' RETURNING id)
		INSERT INTO typed_notes SELECT id, 'restored' FROM t;
	});

	is( $target->safe_psql(
			$db, q{
			SELECT string_agg(format('%s:%s:%s', n.tbl, n.new_rows, n.all_above), ' ' ORDER BY n.tbl)
			  FROM (SELECT 'accounts' AS tbl, count(*) AS new_rows,
			               bool_and(id > (SELECT max_id FROM restored WHERE tbl = 'accounts')
			                        AND p.worker_id = 2
			                        AND p.created_at > now() - interval '1 minute') AS all_above
			          FROM accounts, snowflake_parse(id) p WHERE name LIKE 'restored%'
			        UNION ALL
			        SELECT 'events', count(*),
			               bool_and(id > (SELECT max_id FROM restored WHERE tbl = 'events')
			                        AND p.worker_id = 2)
			          FROM events, snowflake_parse(id) p WHERE what = 'restored'
			        UNION ALL
			        SELECT 'native', count(*),
			               bool_and(id > (SELECT max_id FROM restored WHERE tbl = 'native')
			                        AND p.worker_id = 2)
			          FROM native, snowflake_parse(id) p WHERE v LIKE 'restored%'
			        UNION ALL
			        SELECT 'typed', count(*),
			               bool_and(id > (SELECT max_id FROM restored WHERE tbl = 'typed')
			                        AND p.worker_id = 2)
			          FROM typed, snowflake_parse(id) p
			         WHERE v = 'restored'
			           AND id IN (SELECT typed_id FROM typed_notes WHERE note = 'restored')) n}),
		'accounts:10:t events:1:t native:10:t typed:10:t',
		"$db: new rows get worker 2 IDs above every restored ID");

	is( $target->safe_psql(
			$db, q{
			SELECT count(*) FROM event_tags t JOIN events e ON e.id = t.event_id
			 WHERE e.what = 'restored'}),
		'1',
		"$db: the widened foreign key takes the new ID");

	# The kept sequences came back at their positions, so the undo script
	# saved before the dump still works.
	is( $target->safe_psql(
			$db, q{
			SELECT (SELECT last_value FROM accounts_id_seq), (SELECT last_value FROM events_id_seq)}),
		'100|50',
		"$db: the kept sequences are at their old positions");
	is( $target->safe_psql(
			$db, q{
			SELECT obj_description('accounts_id_seq'::regclass, 'pg_class'),
			       obj_description('events_id_seq'::regclass, 'pg_class')}),
		'Unused since public.accounts.id moved to snowflake_nextval(); kept for its undo, drop it when not needed|'
		  . 'Unused since public.events.id moved to snowflake_nextval(); kept for its undo, drop it when not needed',
		"$db: ... with the comments that say why they are kept");
	$target->safe_psql(
		$db, q{
		DO $$
		DECLARE
			s text;
		BEGIN
			FOR s IN SELECT statement FROM snowflake_migration_log
			          WHERE kind = 'undo' ORDER BY tbl, step
			LOOP
				EXECUTE s;
			END LOOP;
		END
		$$;
	});
	is( $target->safe_psql(
			$db, q{
			INSERT INTO accounts (name) VALUES ('undone') RETURNING id;
			INSERT INTO events (what) VALUES ('undone') RETURNING id;}),
		"101\n51",
		"$db: after the undo script the old sequences continue");
}

$target->stop;
done_testing();
