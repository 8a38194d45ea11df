
# Copyright (c) 2026, snowflake contributors

# Pulling the plug repeatedly under load.  pgbench inserts
# into a table whose primary key defaults to snowflake_nextval(); the server
# is stopped with mode "immediate" in the middle of it and started again,
# four times.  The primary key never rejects a row, and the IDs committed
# after each restart are all larger than those committed before it.
#
# Pins the persisted mark across crashes: each restart puts the server's
# clock ten minutes behind the real time (snowflake.max_drift raised to
# allow it), and the test checks that the last ID committed before the crash is
# ahead of the clock at the restart.  A restart takes about a second, after
# which the real clock alone would already be past the old IDs; ten minutes
# behind, only the mark keeps the new IDs above them.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(usleep);

my $rounds = 4;

# With 3 sequence bits (8 IDs per ms) pgbench usually outruns the clock, so
# the IDs also run ahead of it by themselves.  (How far depends on the
# machine's speed, so it is reported, not asserted.)
my $node = snowflake_node('crash_loop', worker_id => 1,
	conf => {
		'snowflake.sequence_bits' => 3,
		'snowflake.max_drift' => 3600000
	});
start_with_fake_clock($node, '+0');
$node->safe_psql('postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), round int NOT NULL);
});

my $count = 0;
foreach my $round (1 .. $rounds)
{
	my $bench = start_pgbench($node, "INSERT INTO t(round) VALUES ($round);\n",
		'-c' => 4, '-j' => 2, '-T' => 30);
	my $pgbench = $bench->{handle};

	# Let the load get going (unless pgbench gives up), then pull the plug.
	my $inserting = 0;
	for (my $tries = 0; $tries < 100 && !$inserting && $pgbench->pumpable; $tries++)
	{
		usleep(100_000);
		$pgbench->pump_nb;
		$inserting = $node->safe_psql('postgres',
			"SELECT count(*) > 0 FROM t WHERE round = $round") eq 't';
	}
	ok($inserting, "round $round: pgbench is inserting");
	usleep(2_500_000) if $inserting;
	note "round $round before the crash: "
	  . $node->safe_psql('postgres',
		'SELECT format($$ids_issued %s, borrows %s, waits %s, drift_ms %s$$, '
		  . 'ids_issued, borrows, waits, drift_ms) FROM snowflake_stats');
	$node->stop('immediate');

	# pgbench's clients lose their connections and abort.
	my $finished = eval { $pgbench->finish };
	if ($@)
	{
		$pgbench->kill_kill;
		fail("round $round: pgbench ended: $@");
	}
	else
	{
		ok(!$finished, "round $round: the crash cut pgbench short");
	}
	unlike("$bench->{stdout}$bench->{stderr}", qr/duplicate key/,
		"round $round: pgbench saw no duplicate key");

	start_with_fake_clock($node, '-600');
	my $new_count = $node->safe_psql('postgres', 'SELECT count(*) FROM t');
	ok($new_count > $count,
		"round $round: rows were committed ($count -> $new_count)");
	$count = $new_count;
	is( $node->safe_psql(
			'postgres',
			'SELECT (snowflake_parse(max(id))).created_at > clock_timestamp() + interval \'1 min\' FROM t'
		),
		't',
		"round $round: after the restart the clock is minutes behind the last ID committed"
	);

	if ($round > 1)
	{
		is( $node->safe_psql(
				'postgres',
				"SELECT (SELECT min(id) FROM t WHERE round = $round) > "
				  . "(SELECT max(id) FROM t WHERE round < $round)"),
			't',
			"round $round: every ID committed after the restart is larger than every ID before it"
		);
	}
}

is( $node->safe_psql(
		'postgres', 'SELECT count(DISTINCT round), count(*) = count(DISTINCT id) FROM t'),
	"$rounds|t", 'rows from every round, no ID twice');
unlike(slurp_file($node->logfile), qr/duplicate key/,
	'the server log has no duplicate key error');

$node->stop;
done_testing();
