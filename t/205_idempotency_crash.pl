
# Copyright (c) 2026, snowflake contributors

# A crash between consuming an idempotency token and committing leaves the
# token unconsumed.  A session runs the recipe of docs/idempotency.md up to
# the commit (the token deleted, the order inserted, a client key claimed),
# a checkpoint writes those changes to disk, and the server is killed
# (stop('immediate')) before the session commits.  After crash recovery the
# token and the key are as they were before the request, its order is not
# there, and the token can be consumed exactly once.  A session terminated
# before its commit likewise gives back its token and its advisory lock.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = snowflake_node('main', worker_id => 1);
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;

CREATE TABLE idempotency_tokens (
    id          bigint PRIMARY KEY DEFAULT snowflake_nextval(),
    account_id  bigint NOT NULL
);

CREATE TABLE orders (
    id          bigint PRIMARY KEY DEFAULT snowflake_nextval(),
    account_id  bigint NOT NULL,
    item        text NOT NULL
);

CREATE TABLE idempotency_keys (
    id           bigint PRIMARY KEY DEFAULT snowflake_nextval(),
    account_id   bigint NOT NULL,
    key          text NOT NULL,
    fingerprint  bytea NOT NULL,
    status       integer,
    body         jsonb,
    UNIQUE (account_id, key)
);
});

# The guide's statements, prepared in each session as an application would.
my $prepare = q{
PREPARE issue_token(bigint) AS
INSERT INTO idempotency_tokens (account_id) VALUES ($1)
RETURNING snowflake_encode(id) AS token;

PREPARE consume_token(text, bigint) AS
DELETE FROM idempotency_tokens
 WHERE id = snowflake_decode($1)
   AND account_id = $2
   AND id >= snowflake_min_id(now() - interval '1 hour')
RETURNING id;

PREPARE consume_and_place_order(text, bigint, text) AS
WITH token AS (
    DELETE FROM idempotency_tokens
     WHERE id = snowflake_decode($1)
       AND account_id = $2
       AND id >= snowflake_min_id(now() - interval '1 hour')
    RETURNING id
)
INSERT INTO orders (account_id, item)
SELECT $2, $3 FROM token
RETURNING id;

PREPARE claim_key(bigint, text, text) AS
INSERT INTO idempotency_keys (account_id, key, fingerprint)
VALUES ($1, $2, sha256(convert_to($3, 'UTF8')))
ON CONFLICT (account_id, key) DO NOTHING
RETURNING id;

PREPARE store_response(bigint, integer, jsonb) AS
UPDATE idempotency_keys SET status = $2, body = $3 WHERE id = $1;
};

my $token = $node->safe_psql('postgres', "$prepare EXECUTE issue_token(42);");
like($token, qr/^[0-9A-HJKMNP-TV-Z]{13}$/, 'a token is issued in base32');

# The request, up to its commit.
my $session = $node->background_psql('postgres');
$session->query_safe($prepare);
$session->query_safe('BEGIN');
my $consumed = $session->query_safe("EXECUTE consume_token('$token', 42)");
is($node->safe_psql('postgres', "SELECT snowflake_decode('$token') = $consumed"),
	't', 'the open transaction consumed the token');
$session->query_safe(
	q{INSERT INTO orders (account_id, item) VALUES (42, 'book')});
my $key_id = $session->query_safe(
	q{EXECUTE claim_key(42, 'k-1', 'POST /orders {"item":"book"}')});
isnt($key_id, '', 'the open transaction claimed the key');
$session->query_safe(
	qq{EXECUTE store_response($key_id, 201, '{"item": "book"}')});

# Its changes are on disk, uncommitted: the token's row is locked by the
# open transaction, and a checkpoint writes the pages that hold them.
is( $node->safe_psql(
		'postgres', qq{
		SELECT count(*) FROM (SELECT FROM idempotency_tokens
		                       WHERE id = snowflake_decode('$token')
		                       FOR UPDATE SKIP LOCKED) t}),
	'0',
	'the token is held by the open transaction');
$node->safe_psql('postgres', 'CHECKPOINT');

my $log_offset = -s $node->logfile;
$node->stop('immediate');
$session->quit;
$node->start;
like(
	slurp_file($node->logfile, $log_offset),
	qr/database system was not properly shut down; automatic recovery in progress/,
	'the server recovered from a crash');

is( $node->safe_psql(
		'postgres', qq{
		SELECT (SELECT count(*) FROM idempotency_tokens WHERE id = snowflake_decode('$token')),
		       (SELECT count(*) FROM orders),
		       (SELECT count(*) FROM idempotency_keys)}),
	'1|0|0',
	'after the crash the token is there, the order and the key are not');

# The client's retries, each consuming the token and placing the order in
# one statement: the first does, the second finds no token.  The key is
# free again: the retry claims it, with a new ID.
my $retry_for = sub {
	my ($t) = @_;
	return qq{$prepare EXECUTE consume_and_place_order('$t', 42, 'book');};
};
my $retry = $retry_for->($token);
like($node->safe_psql('postgres', $retry),
	qr/^\d+$/, 'the retry consumes the token and places the order');
is($node->safe_psql('postgres', $retry), '', 'a second retry does nothing');
is( $node->safe_psql(
		'postgres', qq{
		SELECT (SELECT count(*) FROM idempotency_tokens WHERE id = snowflake_decode('$token')),
		       (SELECT count(*) FROM orders)}),
	'0|1',
	'the token is gone, and one order is placed');
my $new_key_id = $node->safe_psql(
	'postgres', qq{
	$prepare
	EXECUTE claim_key(42, 'k-1', 'POST /orders {"item":"book"}');});
is($node->safe_psql('postgres', "SELECT $new_key_id > $key_id"),
	't', 'the key is claimed again, with a new ID above the lost one');

# A session that ends without committing (here terminated, as when its
# connection is lost) gives back the token it consumed and the advisory
# lock it held.
$token = $node->safe_psql('postgres', "$prepare EXECUTE issue_token(42);");
$session = $node->background_psql('postgres');
$session->query_safe($prepare);
$session->query_safe('BEGIN');
my $pid = $session->query_safe('SELECT pg_backend_pid()');
$consumed = $session->query_safe("EXECUTE consume_token('$token', 42)");
$session->query_safe("SELECT pg_advisory_xact_lock($consumed)");
is( $node->safe_psql(
		'postgres', "SELECT pg_try_advisory_xact_lock($consumed)"),
	'f',
	'the open transaction holds the advisory lock on the token');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
$session->quit;
ok( $node->poll_query_until(
		'postgres', qq{
		SELECT pg_try_advisory_xact_lock($consumed)
		   AND EXISTS (SELECT FROM idempotency_tokens
		                WHERE id = snowflake_decode('$token')
		                FOR UPDATE SKIP LOCKED)}),
	'once the session is gone, the lock is free and the token is back');
like($node->safe_psql('postgres', $retry_for->($token)),
	qr/^\d+$/, 'and the token can be spent');

done_testing();
