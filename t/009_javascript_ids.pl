# Copyright (c) 2026, snowflake contributors

# IDs that JavaScript numbers hold exactly, for the layout's whole lifetime:
# snowflake.id_bits = 53 with 4 worker bits and 8 sequence bits leaves 41
# timestamp bits, the default lifetime (2025-01-01 to 2094-09-07), and no ID
# of it is above 2^53 - 1 = 9007199254740991 (Number.MAX_SAFE_INTEGER).
#
# The server's clock is pinned to 2027-01-01 12:00 UTC for a) and b), so
# that the lifetimes b) checks from the epoch (one over since 2026, one
# lasting until 2059) do not depend on the date of the run.
#
# a) IDs are issued, parse back to this server and now, and are all below
#    2^53; snowflake_stats shows the layout and its end; the time helpers
#    and snowflake_compose stop at 2^53 - 1, and a larger number is refused
#    rather than decoded to a time past the lifetime.
# b) ALTER SYSTEM checks each layout setting with id_bits = 53, the
#    timestamp width it leaves and that width's lifetime from the epoch.
# c) With the server's clock a few seconds before the end of the lifetime
#    (libfaketime), IDs are issued up to the last millisecond, the last one
#    at most 2^53 - 1, then generation refuses.
# d) A server that issued 63-bit IDs cannot switch to 53 bits: its persisted
#    mark lies above every 53-bit ID, and generation refuses with a hint.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::Local qw(timegm);

need_libfaketime();

my $max_safe = '9007199254740991';    # 2^53 - 1
my %js_layout = (
	'snowflake.id_bits' => 53,
	'snowflake.worker_bits' => 4,
	'snowflake.sequence_bits' => 8);

my $node = snowflake_node('js', worker_id => 15, conf => \%js_layout);
start_with_fake_clock($node, fake_clock_offset_to(timegm(0, 0, 12, 1, 0, 2027)));
$node->safe_psql('postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE ids (id bigint NOT NULL, phase int NOT NULL);
});

#
# a) IDs at the pinned instant.
#
is( $node->safe_psql(
		'postgres',
		'SELECT timestamp_bits, worker_bits, sequence_bits, epoch, lifetime_end FROM snowflake_stats'
	),
	'41|4|8|2025-01-01 00:00:00+00|2094-09-07 15:47:35.551+00',
	'snowflake_stats: 41 timestamp bits, the lifetime ends in 2094');

$node->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_nextval(), 1 FROM generate_series(1, 20000)');
$node->safe_psql('postgres',
	'INSERT INTO ids SELECT id, 1 FROM snowflake_nextval(20000) AS id');
is( $node->safe_psql(
		'postgres', qq{
		SELECT count(*), count(DISTINCT id), max(id) <= $max_safe,
		       bool_and(p.worker_id = 15),
		       bool_and(p.created_at BETWEEN now() - interval '1 minute' AND now() + interval '1 minute'),
		       bool_and(p.sequence BETWEEN 0 AND 255)
		  FROM ids, snowflake_parse(id) p}),
	"40000|40000|t|t|t|t",
	'40000 IDs, all distinct, below 2^53, parsed to worker 15, now, and 8-bit sequences');
# 20000 IDs at 256 per millisecond take about 80 ms of ID time each run
is( $node->safe_psql(
		'postgres',
		'SELECT max(p.created_at) - min(p.created_at) >= interval \'150 ms\' FROM ids, snowflake_parse(id) p'
	),
	't',
	'256 IDs per millisecond: 40000 IDs span at least 150 ms of ID time');
# a JSON number round trip is exact below 2^53: JavaScript, like float8,
# holds these integers exactly
is( $node->safe_psql(
		'postgres',
		'SELECT count(*) FILTER (WHERE id::float8::bigint <> id) FROM ids'),
	'0',
	'every ID survives a trip through a double (a JavaScript number)');

is( $node->safe_psql(
		'postgres', q{
		SELECT snowflake_max_id(lifetime_end), snowflake_compose(lifetime_end, 15, 255),
		       snowflake_range_max_id(tstzrange(lifetime_end - interval '1 day', NULL)),
		       (snowflake_parse(9007199254740991)).created_at = lifetime_end
		  FROM snowflake_stats}),
	"$max_safe|$max_safe|$max_safe|t",
	'the last ID of the lifetime is 2^53 - 1, whichever helper computes it');
psql_fails_like(
	$node,
	q{SELECT snowflake_min_id(lifetime_end + interval '1 millisecond') FROM snowflake_stats},
	qr/ERROR:  timestamp 2094-09-07 15:47:35\.552\+00 is outside the lifetime of snowflake IDs/,
	'one millisecond later is outside the lifetime');
my $err = psql_fails_like(
	$node,
	'SELECT snowflake_parse(9007199254740992)',
	qr/ERROR:  snowflake ID 9007199254740992 is out of range for the snowflake layout/,
	'2^53 is not an ID of this layout');
like($err, qr/DETAIL:  With snowflake\.id_bits = 53, every ID is at most 9007199254740991\./,
	'... and the detail says where the layout ends');
psql_fails_like(
	$node,
	'SELECT snowflake_to_timestamptz(250101696657649664)',
	qr/ERROR:  snowflake ID 250101696657649664 is out of range for the snowflake layout/,
	'a 63-bit ID is refused, not decoded to a time past the lifetime');
is( $node->safe_psql(
		'postgres',
		q{SELECT 9007199254740992 <@ tstzrange('2025-01-01 00:00:00+00', NULL)}),
	'f',
	'... and lies in no time range');

#
# b) ALTER SYSTEM checks the layout settings against id_bits = 53.
#
$err = psql_fails_like(
	$node,
	'ALTER SYSTEM SET snowflake.worker_bits = 11',
	qr/ERROR:  invalid value for parameter "snowflake\.worker_bits": 11/,
	'ALTER SYSTEM: 11 worker bits would leave 34 timestamp bits');
like(
	$err,
	qr/DETAIL:  snowflake\.worker_bits = 11 and snowflake\.sequence_bits = 8 would leave 34 of the 53 bits of snowflake\.id_bits for the timestamp; at least 35 are needed\./,
	'... and the detail names id_bits');
psql_fails_like(
	$node,
	'ALTER SYSTEM SET snowflake.id_bits = 46',
	qr/DETAIL:  snowflake\.worker_bits = 4 and snowflake\.sequence_bits = 8 would leave 34 of the 46 bits of snowflake\.id_bits for the timestamp/,
	'ALTER SYSTEM: 46 ID bits would leave 34 timestamp bits');
psql_fails_like(
	$node,
	'ALTER SYSTEM SET snowflake.worker_bits = 10',
	qr/DETAIL:  With 35 timestamp bits \(snowflake\.id_bits = 53, snowflake\.worker_bits = 10, snowflake\.sequence_bits = 8\), IDs last 1\.09 years from the epoch, 2025-01-01 00:00:00\+00, and that time is over\./,
	'ALTER SYSTEM: 10 worker bits leave 35 timestamp bits, whose lifetime from the epoch is over');
$node->safe_psql('postgres', q{
	ALTER SYSTEM SET snowflake.worker_bits = 5;
	ALTER SYSTEM RESET snowflake.worker_bits;
});
pass('ALTER SYSTEM: 5 worker bits leave 40 timestamp bits and are accepted');

#
# c) A few seconds before the end of the lifetime.
#
my $end = $node->safe_psql('postgres',
	'SELECT extract(epoch FROM lifetime_end) FROM snowflake_stats');
$node->stop;
# the lifetime ends 9 to 10 s after the server's clock when it starts
start_with_fake_clock($node, fake_clock_offset_to($end - 10));
is( $node->safe_psql(
		'postgres',
		q{SELECT lifetime_end - clock_timestamp() BETWEEN '5 s' AND '10 s' FROM snowflake_stats}),
	't', "the server's clock is a few seconds before the end of the lifetime, in 2094");

# Draw IDs in batches until the error.
issue_until_lifetime_end($node);
is( $node->safe_psql('postgres', 'SELECT sqlstate, message FROM run'),
	'22008|snowflake layout has run out of timestamps',
	'near the end: the batches stop with the error');
is( $node->safe_psql(
		'postgres', qq{
		SELECT r.batches > 50, r.good, r.last_id <= $max_safe,
		       (snowflake_parse(r.last_id)).created_at
		         BETWEEN s.lifetime_end - interval '100 ms' AND s.lifetime_end
		  FROM run r, snowflake_stats s}),
	't|t|t|t',
	'near the end: IDs increase up to the last millisecond, the last at most 2^53 - 1');
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT snowflake_nextval()");
isnt($ret, 0, 'after the last ID: snowflake_nextval() fails');
is($stdout, '', 'after the last ID: no ID returned');
like($stderr, qr/ERROR:  22008: snowflake layout has run out of timestamps/,
	'after the last ID: error message and SQLSTATE');
like($stderr, qr/DETAIL:  With 41 timestamp bits and snowflake\.epoch .*, the last millisecond an ID can carry is 2094-09-07 15:47:35\.551\+00\./,
	'after the last ID: the detail gives the end of the lifetime');
check_no_crash($node, 'after the last ID');
$node->stop;

#
# d) A server with 63-bit IDs cannot switch to 53 bits.
#
my $old = snowflake_node('js_switch', worker_id => 3);
$old->start;
$old->safe_psql('postgres', q{
	CREATE EXTENSION snowflake;
	SELECT snowflake_nextval();
});
set_snowflake_conf($old, %js_layout);
$old->restart;
$err = psql_fails_like(
	$old,
	'SELECT snowflake_nextval()',
	qr/ERROR:  system clock is too far behind the last snowflake ID/,
	'switching a server with 63-bit IDs to 53 bits: generation refuses');
like($err, qr/HINT:  A gap this large usually means .*snowflake\.id_bits was changed after IDs were issued/,
	'... and the hint names the settings that changed');
$old->stop;

done_testing();
