
# Copyright (c) 2026, snowflake contributors

# snowflake.epoch stands for one instant, in every session and on every day.
#
# The epoch is parsed once, when the server loads the library, and a time
# written without a zone is read as UTC.  (Parsed in each backend with its
# own TimeZone, an epoch written without an offset moved with the session:
# IDs from a session in Auckland ran 13 hours ahead of the clock, and every
# session after it was refused by the clock rules until the clock caught
# up.)  Words whose meaning depends on the day they are read, such as
# "today", are refused: the server starts and generation says why.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = snowflake_node(
	'zone',
	worker_id => 3,
	conf => {
		'snowflake.epoch' => '2025-01-01 00:00:00',
		'TimeZone' => 'America/New_York'
	});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

# Each session sets its zone before its first call, which is when a backend
# used to parse the epoch.
my @zones = ('Pacific/Auckland', 'America/Los_Angeles', 'Asia/Kolkata', 'UTC');
$node->safe_psql('postgres', 'CREATE TABLE ids (zone text, id bigint)');
for my $zone (@zones)
{
	$node->safe_psql(
		'postgres', qq{
		SET TimeZone = '$zone';
		INSERT INTO ids SELECT '$zone', snowflake_nextval()
		  FROM generate_series(1, 100);});
}

is( $node->safe_psql(
		'postgres', q{
		SELECT count(*) FROM ids
		 WHERE abs(extract(epoch FROM snowflake_to_timestamptz(id) - now())) < 60}),
	100 * @zones,
	'every session stamps its IDs with the real time, whatever its TimeZone');
check_strictly_increasing($node, 'ids', undef, 'ctid',
	'IDs from sessions in different zones');

for my $zone (@zones)
{
	is( $node->safe_psql(
			'postgres', qq{
			SET TimeZone = '$zone';
			SELECT epoch = '2025-01-01 00:00:00+00' AND
			       (snowflake_parse(0)).created_at = '2025-01-01 00:00:00+00'
			  FROM snowflake_stats}),
		't',
		"a session in $zone reads the epoch as 2025-01-01 00:00 UTC");
}

unlike(slurp_file($node->logfile), qr/system clock moved back/,
	'no session saw the clock step back');

# An epoch with a zone name is read in that zone.
set_snowflake_conf($node,
	'snowflake.epoch' => '2025-01-01 00:00:00 Europe/Berlin');
$node->restart;
is( $node->safe_psql(
		'postgres',
		q{SELECT epoch = '2024-12-31 23:00:00+00' FROM snowflake_stats}),
	't',
	'an epoch with a zone name is read in that zone');

# A relative word in postgresql.conf: the server starts, generation refuses.
set_snowflake_conf($node, 'snowflake.epoch' => 'today');
$node->restart;
my $stderr = psql_fails_like(
	$node,
	'SELECT snowflake_nextval()',
	qr/ERROR:  invalid value for snowflake\.epoch: "today"/,
	'"today" as the epoch');
like(
	$stderr,
	qr/DETAIL:  Write it in ISO 8601 as YYYY-MM-DD HH:MM:SS/,
	'"today" as the epoch: the detail shows the accepted form');
check_no_crash($node, 'after a relative epoch');

$node->stop;
done_testing();
