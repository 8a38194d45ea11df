
# Copyright (c) 2026, snowflake contributors

# A streaming standby made from a base backup, with the same
# worker id (postgresql.conf is copied), replays the primary's marks.  It
# refuses to generate IDs while in recovery.  Promoted with its clock an hour
# behind (and max_drift large enough), it issues IDs larger than every ID the
# old primary issued.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use SnowflakeTest;
use Test::More;

need_libfaketime();

my $primary = snowflake_node('primary', worker_id => 1,
	init => { allows_streaming => 1 });
$primary->start;
$primary->safe_psql('postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE ids (id bigint NOT NULL, phase int NOT NULL);
});

# No ID has been issued yet, so the backup holds no mark file: whatever mark
# the standby has later, it got from WAL.
$primary->backup('b1');
ok(!-e ($primary->backup_dir . '/b1/snowflake.mark'),
	'the base backup holds no mark file');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b1', has_streaming => 1);
$standby->start;

is($standby->safe_psql('postgres', 'SELECT worker_id FROM snowflake_stats'),
	'1', 'the standby has the same worker id as the primary');
my ($ret, $stdout, $stderr) =
  $standby->psql('postgres', 'SELECT snowflake_nextval()');
isnt($ret, 0, 'snowflake_nextval() fails on the standby');
like(
	$stderr,
	qr/ERROR:  cannot generate snowflake IDs during recovery/,
	'the standby refuses: cannot generate snowflake IDs during recovery');
psql_fails_like(
	$standby,
	'SELECT * FROM snowflake_nextval(0)',
	qr/ERROR:  cannot generate snowflake IDs during recovery/,
	'the standby refuses a call for no IDs too');

# Two batches more than a mark window apart, so several marks are logged.
$primary->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_nextval(), 1 FROM generate_series(1, 1000)');
$primary->safe_psql('postgres', 'SELECT pg_sleep(1.2)');
$primary->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_nextval(), 1 FROM generate_series(1, 1000)');
is( $primary->safe_psql(
		'postgres', 'SELECT marks_written >= 2 FROM snowflake_stats'),
	't', 'the primary wrote several marks');
$primary->wait_for_catchup($standby, 'replay');

is($standby->safe_psql('postgres', 'SELECT count(*) FROM ids'),
	'2000', 'the standby replayed the IDs');
my $max_old = max_id($standby);
is( $standby->safe_psql(
		'postgres', "SELECT mark_id >= $max_old FROM snowflake_stats"),
	't', 'on the standby, redo raised the mark above every replayed ID');

my $mark = read_mark_file(
	$standby,
	'on the standby, redo wrote the mark file',
	'the mark file holds one ID in decimal');
is($standby->safe_psql('postgres', "SELECT ${mark}::bigint >= $max_old"),
	't', 'the standby\'s mark file covers every replayed ID');

# The old primary goes away; the standby restarts an hour behind and is
# promoted.
$primary->stop;
set_snowflake_conf($standby, 'snowflake.max_drift' => 4000000);
$standby->stop;
start_with_fake_clock($standby, '-3600');
clock_offset_ok($standby, -3600, "the standby's clock is an hour behind");
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'timed out waiting for the promotion';

issue_above($standby, 2, 1000, $max_old,
	'every ID from the new primary is larger than every ID from the old one');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM ids'),
	'3000', 'every phase issued its IDs');
# An hour, plus the mark window, minus the seconds since the old primary's
# last ID.
is( $standby->safe_psql(
		'postgres',
		'SELECT drift_ms BETWEEN 3570000 AND 3620000 FROM snowflake_stats'),
	't', 'snowflake_stats: drift_ms is about an hour');

$standby->stop;
done_testing();
