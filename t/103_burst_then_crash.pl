
# Copyright (c) 2026, snowflake contributors

# A burst borrows time ahead of the clock (16 IDs per ms
# with snowflake.sequence_bits = 4), then the server crashes and starts again
# at the real time, which is now behind the last ID.  The persisted mark
# covers the borrowed time: no ID is issued twice.  Twice over, so that each
# half of the mark is needed once: its WAL records, then the mark file alone.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use SnowflakeTest;
use Test::More;

# The burst may borrow the whole of max_drift, so that after the crash the
# clock is still far behind its last ID.
my $node = snowflake_node(
	'burst',
	worker_id => 1,
	conf => {
		'snowflake.sequence_bits' => 4,
		'snowflake.max_borrow' => '60s'
	});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE ids (id bigint NOT NULL, phase int NOT NULL);
});

# Two crashes.  In the first, crash recovery replays the mark records
# written since the last checkpoint, and the mark file has the last one too.
# In the second, a checkpoint follows the burst, so recovery replays no
# mark: only the mark file knows about the borrowed time.
foreach my $round (1, 2)
{
	my $checkpoint = $round == 2;
	my $crash = $checkpoint ? 'checkpoint and crash' : 'crash';
	my $burst_phase = 2 * $round - 1;
	my $after_phase = 2 * $round;

	# 200000 IDs need 12500 ms of ID time, issued in a second or two: well
	# ahead of the clock, yet (even twice) inside the default max_drift.
	$node->safe_psql('postgres', qq{
		SELECT snowflake_stats_reset();
		INSERT INTO ids SELECT snowflake_nextval(), $burst_phase FROM generate_series(1, 200000);
	});
	is( $node->safe_psql(
			'postgres',
			'SELECT ids_issued, borrows > 0, drift_ms > 0, marks_written > 1 FROM snowflake_stats'
		),
		'200000|t|t|t',
		"round $round: the burst borrowed time: borrows > 0 and drift_ms > 0 right after it");
	my $max_before = max_id($node);

	$node->safe_psql('postgres', 'CHECKPOINT') if $checkpoint;
	$node->stop('immediate');

	# The mark file is one line: an ID at or above every ID issued.
	my $mark = read_mark_file(
		$node,
		"round $round: the mark file exists after the $crash",
		"round $round: the mark file holds one ID in decimal");

	$node->start;
	is( $node->safe_psql('postgres', "SELECT ${mark}::bigint >= $max_before"),
		't', "round $round: the mark file covers every ID issued before the $crash");
	is( $node->safe_psql(
			'postgres',
			"SELECT mark_id >= $mark, last_id >= $mark, ids_issued, borrows FROM snowflake_stats"
		),
		't|t|0|0',
		"round $round: after the $crash the generator starts from the persisted mark, counters from 0"
	);
	is( $node->safe_psql(
			'postgres',
			"SELECT (snowflake_parse($max_before)).created_at > clock_timestamp()"),
		't', "round $round: after the restart the real clock is behind the last ID issued");

	$node->safe_psql('postgres',
		"INSERT INTO ids SELECT snowflake_nextval(), $after_phase FROM generate_series(1, 1000)");
	is( $node->safe_psql(
			'postgres',
			"SELECT count(*), bool_and(id > $max_before), bool_and(id > $mark) FROM ids WHERE phase = $after_phase"
		),
		'1000|t|t',
		"round $round: every ID after the $crash is larger than every ID before it, and than the mark"
	);
	is( $node->safe_psql(
			'postgres', 'SELECT count(*) = count(DISTINCT id) FROM ids'),
		't', "round $round: no ID issued twice");
	is( $node->safe_psql(
			'postgres', 'SELECT ids_issued, borrows > 0 FROM snowflake_stats'),
		'1000|t',
		"round $round: the new IDs borrowed from the mark while the clock was behind it");
}
is($node->safe_psql('postgres', 'SELECT count(*) FROM ids'),
	'402000', 'all IDs stored');

$node->stop;
done_testing();
