
# Copyright (c) 2026, snowflake contributors

# Changing the layout or epoch of a server that already issued IDs: new IDs
# must still lie above every old one.  More worker + sequence bits make the
# old IDs decode to earlier timestamps, so generation goes on at once; fewer
# put them far in the future, so generation refuses, with a hint that names
# the settings rather than the clock.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = snowflake_node('layout_change', worker_id => 4);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$node->safe_psql('postgres',
	'CREATE TABLE ids AS SELECT snowflake_nextval() AS id FROM generate_series(1, 1000)');

# Fewer worker + sequence bits: the old IDs decode to timestamps thousands
# of years ahead.
set_snowflake_conf($node, 'snowflake.sequence_bits' => 1);
$node->restart;
my ($ret, $out, $err) =
  $node->psql('postgres', 'SELECT snowflake_nextval()');
isnt($ret, 0, 'a narrower layout refuses to generate');
like($err, qr/system clock is too far behind the last snowflake ID/,
	'with the too-far-behind error');
like($err, qr/HINT:.*was changed after IDs were issued/,
	'whose hint names the changed settings, not the clock');

# Narrower still (no worker bits, one sequence bit): the old mark now stands
# for an instant millions of years ahead, beyond timestamptz.  snowflake_stats,
# which one reads to diagnose this, still answers, with mark_time NULL.
set_snowflake_conf($node,
	'snowflake.worker_bits' => 0,
	'snowflake.sequence_bits' => 1);
$node->restart;
is( $node->safe_psql('postgres',
		'SELECT mark_id IS NOT NULL, mark_time IS NULL, timestamp_bits FROM snowflake_stats'),
	't|t|62',
	'snowflake_stats answers when the mark lies beyond timestamptz, with mark_time NULL');

# Back to the old layout: generation resumes above the old IDs.
set_snowflake_conf($node);
$node->restart;
is( $node->safe_psql('postgres',
		'SELECT snowflake_nextval() > (SELECT max(id) FROM ids)'),
	't', 'the previous layout resumes above the old IDs');

# More worker bits: works at once, still above.
set_snowflake_conf($node, 'snowflake.worker_bits' => 12);
$node->restart;
is( $node->safe_psql('postgres',
		'SELECT snowflake_nextval() > (SELECT max(id) FROM ids)'),
	't', 'more worker + sequence bits issue IDs above the old ones at once');

# An earlier epoch (here the Unix epoch, which once overflowed decoding):
# the old IDs decode to earlier instants, generation goes on above them, and
# new IDs decode to now.
# (The default layout: with 12 worker bits a 1970 epoch would have ended
# in 1987, which generation refuses.)
set_snowflake_conf($node, 'snowflake.epoch' => '1970-01-01 00:00:00+00');
$node->restart;
is( $node->safe_psql('postgres',
		"SELECT snowflake_nextval() > (SELECT max(id) FROM ids),
		        abs(extract(epoch FROM snowflake_to_timestamptz(snowflake_currval()) - now())) < 60,
		        (snowflake_parse(snowflake_currval())).created_at = snowflake_to_timestamptz(snowflake_currval())"),
	't|t|t', 'with a 1970 epoch, IDs are above the old ones and decode to now');

# An epoch after the clock: the error shows both instants, not one twice.
set_snowflake_conf($node, 'snowflake.epoch' => '2999-01-01 00:00:00+00');
$node->restart;
($ret, $out, $err) = $node->psql('postgres', 'SELECT snowflake_nextval()');
like($err, qr/system clock is before snowflake\.epoch/, 'an epoch in the future refuses');
like($err, qr/snowflake\.epoch is 2999-01-01 00:00:00\+00, and the clock reads (?!2999)\d{4}-/,
	'the detail names the epoch and the clock, each once');

$node->stop;
done_testing();
