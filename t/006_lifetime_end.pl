
# Copyright (c) 2026, snowflake contributors

# Pins the generator's lifetime check (README, "Guarantees": never negative,
# never wrapped; past the end of the layout's lifetime, generation fails
# with an error).
#
# snowflake.worker_bits = 20 and snowflake.sequence_bits = 8 leave 35
# timestamp bits, about 1.09 years: with the default epoch 2025-01-01 that
# lifetime ended in February 2026.
# a) With the server's clock at 2027-01-01 12:00 UTC (a fixed instant, so
#    that the test does not depend on the date of the run) the lifetime is
#    over: every call refuses with "snowflake layout has run out of
#    timestamps", no ID comes back, nothing is persisted, and the server
#    stays up.
# b) With the server's clock a few seconds before the end, IDs are issued
#    (256 per ms) right up to the last millisecond; then the same error comes,
#    before the clock itself gets there, instead of a wrapped or negative ID.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::Local qw(timegm);

need_libfaketime();

my $run_out = qr/ERROR:  22008: snowflake layout has run out of timestamps/;

my $node = snowflake_node(
	'lifetime',
	worker_id => 1,
	conf => {
		'snowflake.worker_bits' => 20,
		'snowflake.sequence_bits' => 8,
		# b) runs the batches to the last position well before the clock
		# gets there: let them borrow the whole of max_drift
		'snowflake.max_borrow' => '60s'
	});
start_with_fake_clock($node, fake_clock_offset_to(timegm(0, 0, 12, 1, 0, 2027)));
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

#
# a) The lifetime is over.
#
is( $node->safe_psql(
		'postgres',
		'SELECT timestamp_bits, lifetime_end < clock_timestamp() FROM snowflake_stats'),
	'35|t',
	'the layout has 35 timestamp bits and its lifetime is over');

foreach my $call ('SELECT snowflake_nextval()', 'SELECT * FROM snowflake_nextval(10)')
{
	my ($ret, $stdout, $stderr) =
	  $node->psql('postgres', "\\set VERBOSITY verbose\n$call");
	isnt($ret, 0, "lifetime over: $call fails");
	is($stdout, '', "lifetime over: $call returns no ID");
	like($stderr, $run_out, "lifetime over: $call: error message and SQLSTATE");
	like($stderr, qr/DETAIL:  With 35 timestamp bits and snowflake\.epoch .*, the last millisecond an ID can carry is 2026-02-/,
		"lifetime over: $call: the detail gives the end of the lifetime");
}
is( $node->safe_psql(
		'postgres', 'SELECT ids_issued, refusals FROM snowflake_stats'),
	'0|2', 'lifetime over: no ID issued, both refusals counted');
ok(!-e $node->data_dir . '/snowflake.mark', 'lifetime over: no mark persisted');
check_no_crash($node, 'lifetime over');

#
# b) A few seconds before the end.
#
my $end = $node->safe_psql('postgres',
	'SELECT extract(epoch FROM lifetime_end) FROM snowflake_stats');
$node->stop;
start_with_fake_clock($node, fake_clock_offset_to($end - 10));
is( $node->safe_psql(
		'postgres',
		q{SELECT lifetime_end - clock_timestamp() BETWEEN '5 s' AND '10 s' FROM snowflake_stats}),
	't', "the server's clock is a few seconds before the end of the lifetime");

# Draw IDs in batches until the error; record whether every batch was full
# and every ID positive and above all before it.
issue_until_lifetime_end($node);
is( $node->safe_psql('postgres', 'SELECT sqlstate, message FROM run'),
	'22008|snowflake layout has run out of timestamps',
	'near the end: the batches stop with the error');
is( $node->safe_psql(
		'postgres', 'SELECT batches > 50, good FROM run'),
	't|t',
	'near the end: IDs were issued, all positive and increasing, none wrapped');
is( $node->safe_psql(
		'postgres', q{
		SELECT (snowflake_parse(r.first_id)).created_at < s.lifetime_end,
			   (snowflake_parse(r.last_id)).created_at
				 BETWEEN s.lifetime_end - interval '100 ms' AND s.lifetime_end
		FROM run r, snowflake_stats s}),
	't|t',
	'near the end: the IDs reach the last millisecond of the lifetime');
is( $node->safe_psql(
		'postgres', 'SELECT lifetime_end > clock_timestamp() FROM snowflake_stats'),
	't', 'near the end: the positions ran out before the clock reached the end');

my ($ret, $stdout, $stderr) =
  $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT snowflake_nextval()");
isnt($ret, 0, 'after the last ID: snowflake_nextval() fails');
is($stdout, '', 'after the last ID: no ID returned');
like($stderr, $run_out, 'after the last ID: error message and SQLSTATE');
check_no_crash($node, 'after the last ID');

$node->stop;
done_testing();
