
# Copyright (c) 2026, snowflake contributors

# Where each new millisecond's sequence starts (snowflake.sequence_start).
#
# Under "spread" (the default) the first ID of a millisecond takes the top
# sequence_bits bits of SplitMix64's finalizer of the timestamp and the
# worker id; under "zero" it takes 0.  The IDs after it count up by one, and
# a millisecond that runs out borrows the next from sequence 0.  SQL below
# recomputes the start, so every check of the sequence is exact; the
# evenness checks are chi-square bounds that IDs issued at real clock times
# break by chance with a probability below 1e-10 each.
#
# a) Low rates, one ID at a time, each after the clock moved past the one
#    before: under spread every ID starts its millisecond at the hash, and
#    id % 16 and id % 1024 are even; IDs issued in pairs (a row and the row
#    its trigger writes) spread too, and not only the first of each pair.
# b) Bursts above 2^sequence_bits, as one batch and as one call after
#    another: every ID is issued, each the position after the one before or
#    the start of a later millisecond, and a batch counts as borrows the
#    milliseconds it runs into past its first.
# c) A reload to "zero": sequence 0 at low rates, every ID a multiple of
#    2^sequence_bits; and back.  IDs strictly increase across the changes.
# d) A clean restart and a crash: the first ID lies above the persisted
#    mark, then the starts are the hash's again.
# e) A JavaScript-safe layout (snowflake.id_bits = 53, 4 worker bits, 8
#    sequence bits): the same under both modes, IDs below 2^53, and
#    id % 1024 fixed to the worker id's low two bits above the sequence.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# The objects the checks use: IDs by phase, in the order they were issued,
# the parts of each, the start each mode gives a millisecond, and a
# chi-square of id % m over a phase.
my $setup = q{
	CREATE EXTENSION snowflake;
	CREATE TABLE ids (phase int, n int, id bigint NOT NULL, PRIMARY KEY (phase, n));

	CREATE VIEW layout AS
		SELECT worker_id, sequence_bits, worker_bits + sequence_bits AS shift,
		       (1 << sequence_bits) - 1 AS max_seq
		  FROM snowflake_stats;
	CREATE VIEW parts AS
		SELECT i.phase, i.n, i.id, i.id >> l.shift AS ts, (i.id & l.max_seq)::int AS seq,
		       ((i.id >> l.shift) << l.sequence_bits) | (i.id & l.max_seq) AS pos
		  FROM ids i, layout l;

	-- unsigned 64-bit arithmetic: numeric modulo 2^64 <-> bit(64)
	CREATE FUNCTION b64(x numeric) RETURNS bit(64) LANGUAGE sql IMMUTABLE AS $$
		SELECT (CASE WHEN m >= 9223372036854775808 THEN m - 18446744073709551616 ELSE m END)::bigint::bit(64)
		  FROM (SELECT mod(x, 18446744073709551616) AS m) s $$;
	CREATE FUNCTION n64(b bit(64)) RETURNS numeric LANGUAGE sql IMMUTABLE AS $$
		SELECT CASE WHEN b::bigint < 0 THEN b::bigint + 18446744073709551616 ELSE b::bigint END $$;
	-- the start of millisecond ts under spread: SplitMix64's finalizer of
	-- ts * 0x9E3779B97F4A7C15 + worker, its top "bits" bits
	CREATE FUNCTION spread_start(ts bigint, worker int, bits int) RETURNS int
	LANGUAGE plpgsql IMMUTABLE AS $$
	DECLARE
		x bit(64) := b64(ts * 11400714819323198485 + worker);
	BEGIN
		x := b64(n64(x # (x >> 30)) * 13787848793156543929);
		x := b64(n64(x # (x >> 27)) * 10723151780598845931);
		x := x # (x >> 31);
		RETURN (x >> (64 - bits))::bigint;
	END $$;
	CREATE FUNCTION start_of(ts bigint, mode text) RETURNS int LANGUAGE sql STABLE AS $$
		SELECT CASE mode WHEN 'zero' THEN 0 ELSE spread_start(ts, worker_id, sequence_bits) END
		  FROM layout $$;

	-- Wait until the clock is past the millisecond of ID "last", so that
	-- the next ID starts a millisecond.
	CREATE FUNCTION wait_past(last bigint) RETURNS void LANGUAGE plpgsql AS $$
	DECLARE
		waited_since timestamptz := clock_timestamp();
	BEGIN
		WHILE clock_timestamp() < snowflake_to_timestamptz(last) + interval '1 ms' LOOP
			IF clock_timestamp() > waited_since + interval '60 s' THEN
				RAISE EXCEPTION 'waited 60 s for the clock (%) to pass the millisecond of ID % (%)',
					clock_timestamp(), last, snowflake_to_timestamptz(last);
			END IF;
		END LOOP;
	END $$;
	CREATE FUNCTION wait_past_last() RETURNS void LANGUAGE sql AS $$
		SELECT wait_past(last_id) FROM snowflake_stats WHERE last_id >= 0 $$;

	-- Issue "groups" groups of "per" IDs as phase "ph", one call after
	-- another, each group once the clock is past the last ID, so that each
	-- group's first ID starts a millisecond (the first group's too, unless
	-- wait_first is false).
	CREATE FUNCTION issue_slowly(ph int, groups int, per int DEFAULT 1,
								 wait_first boolean DEFAULT true) RETURNS void
	LANGUAGE plpgsql AS $$
	DECLARE
		last bigint;
		k int := 0;
	BEGIN
		IF wait_first THEN
			PERFORM wait_past_last();
		END IF;
		FOR g IN 1 .. groups LOOP
			IF g > 1 THEN
				PERFORM wait_past(last);
			END IF;
			FOR i IN 1 .. per LOOP
				k := k + 1;
				last := snowflake_nextval();
				INSERT INTO ids VALUES (ph, k, last);
			END LOOP;
		END LOOP;
	END $$;

	-- IDs of a phase that are neither the position after the one before nor
	-- the start of a later millisecond under "mode"
	CREATE FUNCTION bad_steps(ph int, mode text) RETURNS bigint LANGUAGE sql AS $$
		SELECT count(*)
		  FROM (SELECT p.*, lag(pos) OVER w AS prev_pos, lag(ts) OVER w AS prev_ts
		          FROM parts p WHERE phase = ph WINDOW w AS (ORDER BY n)) s
		 WHERE prev_pos IS NOT NULL AND pos <> prev_pos + 1
		   AND NOT (ts > prev_ts AND seq = start_of(ts, mode)) $$;
	-- IDs of a phase (the first of each group of "per") that do not start
	-- their millisecond where "mode" says
	CREATE FUNCTION bad_starts(ph int, mode text, per int DEFAULT 1) RETURNS bigint
	LANGUAGE sql AS $$
		SELECT count(*) FROM parts
		 WHERE phase = ph AND (n - 1) % per = 0 AND seq <> start_of(ts, mode) $$;
	-- the chi-square of id % m against uniform, over the first ID of each
	-- group of "per" in a phase
	CREATE FUNCTION chi2(ph int, m int, per int DEFAULT 1) RETURNS float8
	LANGUAGE sql AS $$
		WITH sample AS (SELECT id FROM ids WHERE phase = ph AND (n - 1) % per = 0),
		     e AS (SELECT count(*)::float8 / m AS e FROM sample),
		     c AS (SELECT id % m AS r, count(*) AS c FROM sample GROUP BY 1)
		SELECT sum((coalesce(c.c, 0) - e.e) ^ 2 / e.e)
		  FROM e, generate_series(0, m - 1) AS g(r) LEFT JOIN c USING (r) $$;
};

# Bounds on the chi-square for m - 1 degrees of freedom that a uniform
# sample passes but with a probability below 1e-10: df 15 -> 80 (7e-11),
# df 1 -> 45 (2e-11), df 255 -> 500 (4e-18), df 1023 -> 1500 (1e-20).
# Under "zero" the chi-square of id % 16 over n IDs issued slowly is 15 n.
my %bound = (2 => 45, 16 => 80, 256 => 500, 1024 => 1500);

# evenness_ok($node, $phase, $m, $per, $name): the chi-square of id % $m
# over the phase (the first ID of each group of $per) is within its bound.
sub evenness_ok
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($node, $phase, $m, $per, $name) = @_;
	my $chi2 = $node->safe_psql('postgres', "SELECT round(chi2($phase, $m, $per)::numeric, 1)");

	cmp_ok($chi2, '<', $bound{$m}, "$name: id % $m is even (chi-square $chi2)");
	return;
}

# every_id_ok($node, $phase, $count, $name): the phase holds $count IDs,
# all distinct, strictly increasing in the order they were issued.
sub every_id_ok
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($node, $phase, $count, $name) = @_;

	is( $node->safe_psql('postgres',
			"SELECT count(*), count(DISTINCT id) FROM ids WHERE phase = $phase"),
		"$count|$count", "$name: $count IDs, all distinct");
	check_strictly_increasing($node, "ids WHERE phase = $phase", undef, 'n', $name);
	return;
}

# Every ID of every phase so far, taken together in the order they were
# issued (phases were issued in increasing order), strictly increases.
sub all_increasing_ok
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($node, $name) = @_;

	check_strictly_increasing($node, 'ids', undef, 'phase, n', $name);
	return;
}

my $node = snowflake_node('main', worker_id => 3);
$node->start;
$node->safe_psql('postgres', $setup);

is($node->safe_psql('postgres', 'SHOW snowflake.sequence_start'),
	'spread', 'spread is the default');

#
# a) Low rates under spread.
#
$node->safe_psql('postgres', 'SELECT issue_slowly(1, 4096)');
every_id_ok($node, 1, 4096, 'spread, one ID per millisecond');
is($node->safe_psql('postgres', "SELECT bad_starts(1, 'spread')"),
	'0', 'spread: every ID starts its millisecond at the hash of the millisecond and worker id');
is($node->safe_psql('postgres', 'SELECT count(DISTINCT seq) > 1000 FROM parts WHERE phase = 1'),
	't', 'spread: the sequences vary');
evenness_ok($node, 1, 16, 1, 'spread, one ID per millisecond');
evenness_ok($node, 1, 1024, 1, 'spread, one ID per millisecond');

# pairs in one millisecond, as a row and the row its trigger writes: the
# first of each pair starts its millisecond, the second follows it
$node->safe_psql('postgres', 'SELECT issue_slowly(2, 2048, 2)');
every_id_ok($node, 2, 4096, 'spread, pairs');
is($node->safe_psql('postgres', "SELECT bad_starts(2, 'spread', 2), bad_steps(2, 'spread')"),
	'0|0', 'spread, pairs: each pair starts at the hash, and the second ID follows the first');
evenness_ok($node, 2, 2, 2, 'spread, the first of each pair');
evenness_ok($node, 2, 16, 2, 'spread, the first of each pair');
all_increasing_ok($node, 'spread, low rates');

#
# b) Bursts above 2^12 under spread.  Before each, the clock passes the
# last ID, so the burst starts a millisecond at its hash.
#
$node->safe_psql('postgres', q{
	SELECT snowflake_stats_reset();
	SELECT wait_past_last();
	INSERT INTO ids SELECT 3, n, id FROM snowflake_nextval(10000) WITH ORDINALITY AS b(id, n);
});
every_id_ok($node, 3, 10000, 'spread, a batch of 10000');
is( $node->safe_psql(
		'postgres', q{
		SELECT max(pos) - min(pos), bool_or(n = 1 AND seq = start_of(ts, 'spread'))
		  FROM parts WHERE phase = 3}),
	'9999|t',
	'spread, a batch: 10000 consecutive positions from the hash start of a millisecond');
is( $node->safe_psql(
		'postgres', q{
		SELECT s.borrows = (p.seq + 9999) >> 12, s.ids_issued
		  FROM snowflake_stats s, parts p WHERE p.phase = 3 AND p.n = 1}),
	't|10000',
	'spread, a batch: borrows counts the milliseconds it ran into past its first');

$node->safe_psql('postgres',
	'INSERT INTO ids SELECT 4, n, snowflake_nextval() FROM generate_series(1, 10000) AS n');
every_id_ok($node, 4, 10000, 'spread, 10000 calls in one statement');
is($node->safe_psql('postgres', "SELECT bad_steps(4, 'spread')"),
	'0', 'spread, calls in one statement: each ID follows the one before or starts a millisecond at the hash');
all_increasing_ok($node, 'spread, bursts');

#
# c) A reload to zero: today's Twitter behaviour, at once.
#
reload_snowflake_conf($node, 'snowflake.sequence_start' => 'zero');
$node->safe_psql('postgres', 'SELECT issue_slowly(5, 512)');
every_id_ok($node, 5, 512, 'zero, one ID per millisecond');
is( $node->safe_psql(
		'postgres',
		"SELECT bad_starts(5, 'zero'), bool_and(id % 4096 = 0), count(DISTINCT id % 16) FROM parts WHERE phase = 5"
	),
	'0|t|1',
	'zero: sequence 0 in every millisecond, every ID a multiple of 4096, one residue of id % 16');
$node->safe_psql('postgres',
	'INSERT INTO ids SELECT 6, n, snowflake_nextval() FROM generate_series(1, 10000) AS n');
every_id_ok($node, 6, 10000, 'zero, 10000 calls in one statement');
is($node->safe_psql('postgres', "SELECT bad_steps(6, 'zero')"),
	'0', 'zero, calls in one statement: each ID follows the one before or starts a millisecond at 0');

reload_snowflake_conf($node, 'snowflake.sequence_start' => 'spread');
$node->safe_psql('postgres', 'SELECT issue_slowly(7, 256)');
is($node->safe_psql('postgres', "SELECT bad_starts(7, 'spread')"),
	'0', 'back to spread at a reload');
all_increasing_ok($node, 'across the changes of mode');

#
# d) A clean restart, then a crash: above the mark, then the hash again.
# The first ID is right above the mark (sequence 0 of the millisecond after
# the mark's) while the clock is behind the mark, or the start of a later
# millisecond.
#
foreach my $stop ([ 8, 'fast', 'restart' ], [ 9, 'immediate', 'crash' ])
{
	my ($phase, $mode, $name) = @$stop;

	$node->stop($mode);
	my $mark = read_mark_file($node, "$name: the mark file exists",
		"$name: the mark file holds an ID");
	$node->start;
	$node->safe_psql('postgres', "SELECT issue_slowly($phase, 256, 1, false)");
	every_id_ok($node, $phase, 256, "after a $name");
	is( $node->safe_psql(
			'postgres', qq{
			SELECT p.id > $mark,
			       (p.ts = ($mark >> l.shift) + 1 AND p.seq = 0)
			       OR (p.ts > ($mark >> l.shift) AND p.seq = start_of(p.ts, 'spread'))
			  FROM parts p, layout l WHERE p.phase = $phase AND p.n = 1}),
		't|t',
		"$name: the first ID lies above the mark, at sequence 0 right after it or at the hash");
	is( $node->safe_psql(
			'postgres',
			"SELECT count(*) FROM parts WHERE phase = $phase AND n > 1 AND seq <> start_of(ts, 'spread')"
		),
		'0',
		"$name: then every millisecond starts at the hash again");
	all_increasing_ok($node, "across the $name");
}
check_no_crash($node, 'main, after the crash');
$node->stop;

#
# e) The JavaScript-safe layout: 53-bit IDs, 4 worker bits, 8 sequence
# bits, worker 9 (low two bits 01).
#
my $js = snowflake_node(
	'js',
	worker_id => 9,
	conf => {
		'snowflake.id_bits' => 53,
		'snowflake.worker_bits' => 4,
		'snowflake.sequence_bits' => 8
	});
$js->start;
$js->safe_psql('postgres', $setup);

$js->safe_psql('postgres', 'SELECT issue_slowly(1, 2048)');
every_id_ok($js, 1, 2048, 'js, spread, one ID per millisecond');
is( $js->safe_psql(
		'postgres',
		"SELECT bad_starts(1, 'spread'), max(id) < 2 ^ 53, bool_and(id % 1024 >> 8 = 1) FROM parts WHERE phase = 1"
	),
	'0|t|t',
	'js, spread: every ID starts its millisecond at the hash, below 2^53; id % 1024 holds the worker id\'s low bits');
evenness_ok($js, 1, 16, 1, 'js, spread');
evenness_ok($js, 1, 256, 1, 'js, spread');

$js->safe_psql('postgres', q{
	SELECT snowflake_stats_reset();
	SELECT wait_past_last();
	INSERT INTO ids SELECT 2, n, id FROM snowflake_nextval(1000) WITH ORDINALITY AS b(id, n);
});
every_id_ok($js, 2, 1000, 'js, spread, a batch of 1000');
is( $js->safe_psql(
		'postgres', q{
		SELECT max(p.pos) - min(p.pos),
		       bool_or(p.n = 1 AND p.seq = start_of(p.ts, 'spread')),
		       min(s.borrows) = (min(p.seq) FILTER (WHERE p.n = 1) + 999) >> 8
		  FROM parts p, snowflake_stats s WHERE p.phase = 2}),
	'999|t|t',
	'js, spread, a batch: consecutive positions from the hash start, borrows counted');
$js->safe_psql('postgres',
	'INSERT INTO ids SELECT 3, n, snowflake_nextval() FROM generate_series(1, 1000) AS n');
every_id_ok($js, 3, 1000, 'js, spread, 1000 calls in one statement');
is($js->safe_psql('postgres', "SELECT bad_steps(3, 'spread')"),
	'0', 'js, spread, calls in one statement: each ID follows the one before or starts a millisecond');

reload_snowflake_conf($js, 'snowflake.sequence_start' => 'zero');
$js->safe_psql('postgres', 'SELECT issue_slowly(4, 256)');
is( $js->safe_psql(
		'postgres',
		"SELECT bad_starts(4, 'zero'), count(DISTINCT id % 256), max(id) < 2 ^ 53 FROM parts WHERE phase = 4"
	),
	'0|1|t',
	'js, zero: sequence 0 in every millisecond');

$js->stop('immediate');
$js->start;
$js->safe_psql('postgres', 'SELECT issue_slowly(5, 256, 1, false)');
is( $js->safe_psql('postgres', "SELECT count(*) FROM parts WHERE phase = 5 AND seq <> 0"),
	'0', 'js, zero, after a crash: sequence 0 in every millisecond');
all_increasing_ok($js, 'js, across the modes and the crash');
check_no_crash($js, 'js, after the crash');
$js->stop;

done_testing();
