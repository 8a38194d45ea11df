
# Copyright (c) 2026, snowflake contributors

# A real ORM client: t/orm_sqlalchemy.py (SQLAlchemy with psycopg2, as
# Debian packages them) creates two tables whose primary keys have
# server_default snowflake_nextval(), inserts 100 authors with a book each
# through a Session, and prints the IDs SQLAlchemy read back with RETURNING.
# Here we check them in SQL: they are the rows in the tables, distinct,
# from worker 1, made just now, and every book points at its author.

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

my $script = "$FindBin::RealBin/orm_sqlalchemy.py";
$script = 't/orm_sqlalchemy.py' unless -f $script;
my ($stdout, $stderr) = ('', '');
my $ran = IPC::Run::run([ $python, $script, $node->host, $node->port, 'orm' ],
	'>', \$stdout, '2>', \$stderr);
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

$node->stop;
done_testing();
