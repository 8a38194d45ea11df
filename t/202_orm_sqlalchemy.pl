
# Copyright (c) 2026, snowflake contributors

# A real ORM client: t/orm_sqlalchemy.py (SQLAlchemy with psycopg2, as
# Debian packages them) creates two tables whose primary keys have
# server_default snowflake_nextval(), inserts 100 authors with a book each
# through a Session, and prints the IDs SQLAlchemy read back with RETURNING.
# Here we check them in SQL: they are the rows in the tables, distinct,
# from worker 1, made just now, and every book points at its author.
#
# Then t/type_psycopg2.py reads and writes the column type snowflake
# (extension 1.4): psycopg2 returns it as a str, or as an int with a
# typecaster registered for its OID; Python ints go in, a negative one is
# refused; SQLAlchemy's ORM, with the type as a UserDefinedType, creates
# tables keyed by it and reads the keys back as ints.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# The first Python that has both modules: $PYTHON, python3 on PATH (which
# may be a pyenv or venv without them), then Debian's own.
my $python;
for my $candidate (grep { defined } $ENV{PYTHON}, 'python3', '/usr/bin/python3')
{
	my ($out, $err) = ('', '');
	my $ok = eval {
		IPC::Run::run([ $candidate, '-c', 'import sqlalchemy, psycopg2' ],
			'>', \$out, '2>', \$err);
	};
	if ($ok)
	{
		$python = $candidate;
		last;
	}
}
skip_all_unless(defined $python,
	'needs python3 with sqlalchemy and psycopg2 (Debian: python3-sqlalchemy python3-psycopg2)');

my $node = snowflake_node('orm', worker_id => 1);
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE orm');
$node->safe_psql('orm', 'CREATE EXTENSION snowflake');

my $started = $node->safe_psql('orm', 'SELECT now()');

my ($ran, $stdout, $stderr) = run_program(undef, {}, $python,
	"$FindBin::RealBin/orm_sqlalchemy.py", $node->host, $node->port, 'orm');
ok($ran, 'the SQLAlchemy script succeeds') or diag($stderr);
is($stderr, '', 'the SQLAlchemy script writes nothing to stderr');

my @authors = $stdout =~ /^author (\d+)$/mg;
my @books = $stdout =~ /^book (\d+ \d+)$/mg;
is(scalar @authors, 100, 'the ORM read back 100 author IDs');
is(scalar @books, 100, 'the ORM read back 100 book IDs');
my ($returning) = $stdout =~ /^returning (\d+)$/m;
cmp_ok($returning // 0, '>', 0, 'the ORM used INSERT ... RETURNING');

# The table definitions SQLAlchemy created.
is(column_defaults($node, 'orm', [ 'authors', 'books' ], ['id']),
	'authors.id bigint snowflake_nextval(), books.id bigint snowflake_nextval()',
	'SQLAlchemy created bigint keys defaulting to snowflake_nextval()');

# The printed IDs, compared with the tables in SQL (never as Perl numbers).
my $author_values = join(', ', map { "($_)" } @authors);
my $book_values = join(', ', map { my ($b, $a) = split / /; "($b, $a)" } @books);
$node->safe_psql(
	'orm', qq{
	CREATE TABLE seen_authors (id bigint);
	INSERT INTO seen_authors VALUES $author_values;
	CREATE TABLE seen_books (id bigint, author_id bigint);
	INSERT INTO seen_books VALUES $book_values;
});

is( $node->safe_psql(
		'orm', q{
		SELECT (SELECT count(DISTINCT id) FROM seen_authors),
		       (SELECT count(DISTINCT id) FROM seen_books),
		       (SELECT count(*) FROM (SELECT id FROM seen_authors
		                              INTERSECT SELECT id FROM seen_books) s),
		       (SELECT count(*) FROM (SELECT id FROM authors
		                              EXCEPT SELECT id FROM seen_authors) s),
		       (SELECT count(*) FROM (SELECT id, author_id FROM books
		                              EXCEPT SELECT id, author_id FROM seen_books) s)}),
	'100|100|0|0|0',
	'the IDs the ORM read back are distinct and are the rows in the tables');

is( $node->safe_psql(
		'orm', qq{
		SELECT count(*)
		  FROM (SELECT id FROM seen_authors UNION ALL SELECT id FROM seen_books) s,
		       snowflake_parse(s.id) p
		 WHERE p.worker_id = 1
		   AND p.created_at >= date_trunc('milliseconds', '$started'::timestamptz)
		   AND p.created_at <= now()}),
	'200',
	'every ID parses to worker 1 and a time during the run');

is( $node->safe_psql(
		'orm', q{
		SELECT count(*) FROM books b JOIN authors a ON a.id = b.author_id
		 WHERE b.title = replace(a.name, 'author', 'book')}),
	'100',
	'every book references its author by the ID the ORM read back');

# The column type.
($ran, $stdout, $stderr) = run_program(undef, {}, $python,
	"$FindBin::RealBin/type_psycopg2.py", $node->host, $node->port, 'orm');
ok($ran, 'the psycopg2 script for the column type succeeds') or diag($stderr);
is($stderr, '', 'the psycopg2 script for the column type writes nothing to stderr');

my @typed = map { my @f = split / /; "('$f[0]', '$f[1]', $f[2], '$f[3]')" }
  $stdout =~ /^returned ([\w-]+ [\w-]+ \d+ \w+)$/mg;
my @typed_lookups = map { my @f = split / /; "('$f[0]', '$f[1]', '$f[2]')" }
  $stdout =~ /^lookup ([\w-]+ [\w-]+ [\w-]+)$/mg;
is(column_defaults($node, 'orm', [ 'typed_authors', 'sa_authors', 'sa_books' ], [ 'id', 'author_id' ]),
	'sa_authors.id snowflake snowflake_nextval(), sa_books.author_id snowflake no default, '
	  . 'sa_books.id snowflake snowflake_nextval(), typed_authors.id snowflake snowflake_nextval()',
	'the tables are keyed by the column type, defaulting to snowflake_nextval()');
SKIP:
{
	skip 'the script printed no IDs', 3 unless @typed && @typed_lookups;
	$node->safe_psql(
		'orm', qq{
		CREATE TABLE typed_returned (client text, note text, got bigint, type text);
		INSERT INTO typed_returned VALUES @{[ join(', ', @typed) ]};
		CREATE TABLE typed_lookups (client text, note text, found text);
		INSERT INTO typed_lookups VALUES @{[ join(', ', @typed_lookups) ]};
		CREATE VIEW typed_made AS
		    SELECT id, name AS note FROM typed_authors
		    UNION ALL SELECT id, name FROM sa_authors
		    UNION ALL SELECT id, title FROM sa_books;
	});
	is( $node->safe_psql(
			'orm', q{
			SELECT client, count(*), count(*) FILTER (WHERE r.got = m.id),
			       string_agg(DISTINCT type, ',')
			  FROM typed_returned r LEFT JOIN typed_made m USING (note)
			 GROUP BY client ORDER BY client}),
		join("\n",
			'psycopg2|20|20|str',
			'psycopg2-typecaster|20|20|int',
			'psycopg2-written|2|2|str',
			'sqlalchemy|20|20|int',
			'sqlalchemy-book|20|20|int'),
		'the column type: every ID exact, a str from psycopg2, an int with a typecaster and '
		  . 'from SQLAlchemy; Python ints written as they are');
	is( $node->safe_psql(
			'orm', q{
			SELECT client, count(*), count(*) FILTER (WHERE found = note)
			  FROM typed_lookups GROUP BY client ORDER BY client}),
		"psycopg2|20|20\npsycopg2-int|20|20\nsqlalchemy|20|20",
		'the column type: looking each row up by the returned str, or by it as an int, finds it');
	is( $node->safe_psql(
			'orm', q{
			SELECT count(*) FROM sa_books b JOIN sa_authors a ON a.id = b.author_id
			 WHERE b.title = replace(a.name, 'sqlalchemy', 'book')}),
		'20',
		'every SQLAlchemy book references its author by the ID read back');
}
like($stdout, qr/^refused psycopg2 psycopg2-negative 22003$/m,
	'a negative Python int is refused (numeric_value_out_of_range)');

$node->stop;
done_testing();
