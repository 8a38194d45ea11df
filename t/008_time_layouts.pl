
# Copyright (c) 2026, snowflake contributors

# The time helpers under layouts and epochs other than the default, each on
# a fresh server (the pg_regress suite covers the default layout):
# a) no worker field (worker_bits = 0);
# b) a timestamp field so wide (62 bits) that its lifetime outlives
#    timestamp with time zone: IDs beyond PostgreSQL's last instant raise an
#    error rather than wrap, and snowflake_stats.lifetime_end is clamped to
#    the last millisecond PostgreSQL can represent;
# c) a non-default epoch (2010-06-01) with 8 worker and 14 sequence bits;
# d) 53-bit IDs (snowflake.id_bits = 53) with 4 worker and 8 sequence bits.
# Under each: the lifetime's ends and the errors beyond them;
# snowflake_min_id, snowflake_max_id and snowflake_compose round-trip
# through snowflake_parse; and "id <@ range" agrees with its definition,
# range @> snowflake_to_timestamptz(id), for every pair of a few hundred IDs
# and about a thousand ranges, whichever way the planner handles the
# operator: bounds computed while planning (a constant range), calls
# evaluated at run time (a range from a column, a PL/pgSQL variable under a
# generic plan, the inner side of a parameterized index scan), or no
# rewrite at all (a volatile range).

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# The last instant of timestamp with time zone, in whole milliseconds.
my $pg_last_ms = '294276-12-31 23:59:59.999+00';

# Tables, helpers and the test data of one layout.  bounds holds candidate
# range bounds just around the epoch, the instant a day later and the end of
# the lifetime (each skipped if timestamp with time zone cannot hold it),
# infinities, a few random instants and NULL (no bound).  ids holds the
# first and last IDs of the milliseconds of those instants, their
# neighbours, and random IDs, all no later than the lifetime's last
# representable millisecond.  ranges holds every range those bounds make,
# with each kind of bound.
my $setup_sql = q{
CREATE EXTENSION snowflake;
SELECT setseed(0.25);

CREATE TABLE layout AS
SELECT epoch, lifetime_end, timestamp_bits,
       ((1 << worker_bits) - 1)::integer AS max_worker,
       ((1 << sequence_bits) - 1)::integer AS max_sequence,
       -- the largest ID the layout allows: below 2^snowflake.id_bits
       (power(2::numeric, timestamp_bits + worker_bits + sequence_bits) - 1)::bigint AS max_id
  FROM snowflake_stats;

-- a range that the planner cannot rewrite: the operator itself is evaluated
CREATE FUNCTION opaque(r tstzrange) RETURNS tstzrange
LANGUAGE plpgsql VOLATILE AS 'BEGIN RETURN r; END';

CREATE TABLE bounds (b timestamptz);
DO $$
DECLARE
    e timestamptz := (SELECT epoch FROM layout);
    l timestamptz := (SELECT lifetime_end FROM layout);
    m timestamptz := e + interval '1 day';
    expr text;
BEGIN
    -- $1 is the epoch, $2 the end of the lifetime, $3 a day after the epoch
    FOREACH expr IN ARRAY ARRAY[
        '''-infinity''::timestamptz', '''infinity''::timestamptz',
        '$1 - interval ''1 day''', '$1 - interval ''1 us''', '$1', '$1 + interval ''1 us''',
        '$1 + interval ''999 us''', '$1 + interval ''1 ms''',
        '$3 - interval ''1 us''', '$3', '$3 + interval ''1 us''', '$3 + interval ''500 us''',
        '$3 + interval ''1 ms''',
        '$2 - interval ''1 ms''', '$2 - interval ''1 us''', '$2', '$2 + interval ''1 us''',
        '$2 + interval ''999 us''', '$2 + interval ''1 ms''', '$2 + interval ''1 day''',
        '$1 + ($2 - $1) * random()', '$1 + ($2 - $1) * random()', '$1 + ($2 - $1) * random()',
        '$3 + interval ''1 hour'' * random()', '$3 + interval ''1 hour'' * random()']
    LOOP
        BEGIN
            EXECUTE 'INSERT INTO bounds SELECT ' || expr USING e, l, m;
        EXCEPTION WHEN datetime_field_overflow THEN
            NULL;   -- beyond timestamp with time zone
        END;
    END LOOP;
END
$$;
INSERT INTO bounds VALUES (NULL);

-- the bounds inside the lifetime
CREATE TABLE inside AS
SELECT b FROM bounds, layout
 WHERE b >= epoch AND date_trunc('milliseconds', b) <= lifetime_end;

CREATE TABLE ids (id bigint PRIMARY KEY);
INSERT INTO ids
SELECT DISTINCT n::bigint
  FROM inside, layout,
       LATERAL (VALUES (snowflake_min_id(b)::numeric - 1), (snowflake_min_id(b)),
                       (snowflake_min_id(b)::numeric + 1), (snowflake_max_id(b)::numeric - 1),
                       (snowflake_max_id(b)), (snowflake_max_id(b)::numeric + 1)) v(n)
 WHERE n BETWEEN 0 AND snowflake_max_id(lifetime_end)
ON CONFLICT DO NOTHING;
INSERT INTO ids
SELECT (random() * 0.999 * snowflake_max_id(lifetime_end)::float8)::bigint
  FROM layout, generate_series(1, 200)
ON CONFLICT DO NOTHING;
ANALYZE ids;

CREATE TABLE ranges (r tstzrange);
INSERT INTO ranges
SELECT DISTINCT tstzrange(lo.b, hi.b, kind)
  FROM bounds lo, bounds hi, unnest(ARRAY['[]', '[)', '(]', '()']) kind
 WHERE lo.b IS NULL OR hi.b IS NULL OR lo.b <= hi.b
UNION
SELECT 'empty';
};

sub check_layout
{
	my ($name, $conf, %expect) = @_;
	my $node = snowflake_node("layout_$name",
		worker_id => $expect{worker_id},
		conf => $conf);
	$node->start;
	$node->safe_psql('postgres', $setup_sql);

	my $sql = sub { return $node->safe_psql('postgres', $_[0]) };

	is( $sql->(
			'SELECT epoch, timestamp_bits, max_worker, max_sequence FROM layout'),
		"$expect{epoch}|$expect{timestamp_bits}|$expect{max_worker}|$expect{max_sequence}",
		"$name: snowflake_stats shows the layout");

	# The test data are what the checks below need.
	my ($nbounds, $ninside, $nids, $nranges) = split /\|/,
	  $sql->(
		'SELECT (SELECT count(*) FROM bounds), (SELECT count(*) FROM inside),
				(SELECT count(*) FROM ids), (SELECT count(*) FROM ranges)'
	  );
	note "$name: $nbounds bounds, $ninside inside the lifetime, $nids IDs, $nranges ranges";
	cmp_ok($nbounds, '>=', 20, "$name: enough range bounds");
	is($nbounds - $ninside, $expect{bounds_outside},
		"$name: the bounds outside the lifetime are the expected ones");
	cmp_ok($nids, '>=', 200, "$name: enough IDs");
	cmp_ok($nranges, '>=', 800, "$name: enough ranges");

	#
	# The lifetime.
	#
	is($sql->('SELECT lifetime_end FROM layout'),
		$expect{lifetime_end}, "$name: lifetime_end");
	is( $sql->(
			q{SELECT snowflake_to_timestamptz(snowflake_min_id(lifetime_end)) = lifetime_end,
					 snowflake_to_timestamptz(snowflake_max_id(lifetime_end)) = lifetime_end,
					 snowflake_min_id(epoch), snowflake_to_timestamptz(0) = epoch
				FROM layout}),
		't|t|0|t',
		"$name: the first and last millisecond of the lifetime convert both ways");
	my $err = psql_fails_like(
		$node,
		"SELECT snowflake_min_id(timestamptz '$expect{epoch}' - interval '1 us')",
		qr/ERROR:  timestamp .* is outside the lifetime of snowflake IDs/,
		"$name: snowflake_min_id just before the epoch");
	like(
		$err,
		qr/DETAIL:  With $expect{timestamp_bits} timestamp bits and snowflake\.epoch \Q$expect{epoch}\E, IDs carry times from the epoch through the millisecond starting at \Q$expect{lifetime_end}\E\./,
		"$name: the detail names the lifetime");
	psql_fails_like(
		$node,
		"SELECT snowflake_compose('infinity', 0, 0)",
		qr/ERROR:  timestamp infinity is outside the lifetime of snowflake IDs/,
		"$name: snowflake_compose at infinity");

	if ($expect{outlives_timestamptz})
	{
		# The last representable millisecond is not the end of the
		# timestamp field: IDs go on beyond it, and converting them to
		# instants raises an error instead of wrapping.
		is( $sql->(
				qq{SELECT snowflake_max_id(lifetime_end) < 9223372036854775807,
						  snowflake_min_id('294276-12-31 23:59:59.999999+00') = snowflake_min_id(lifetime_end)
					 FROM layout}),
			't|t',
			"$name: IDs continue beyond PostgreSQL's last millisecond, which is still in the lifetime");
		my $beyond = $sql->(
			'SELECT snowflake_max_id(lifetime_end) + 1 FROM layout');
		my $field = $sql->("SELECT ${beyond}::bigint >> (63 - $expect{timestamp_bits})");
		psql_fails_like(
			$node,
			"SELECT snowflake_to_timestamptz($beyond)",
			qr/ERROR:  snowflake timestamp $field is out of range for timestamp with time zone/,
			"$name: snowflake_to_timestamptz of the first ID beyond PostgreSQL's last instant");
		my $max_field = $sql->("SELECT 9223372036854775807 >> (63 - $expect{timestamp_bits})");
		psql_fails_like(
			$node,
			'SELECT snowflake_to_timestamptz(9223372036854775807)',
			qr/ERROR:  snowflake timestamp $max_field is out of range for timestamp with time zone\nDETAIL:  It lies beyond the last instant PostgreSQL can represent\./,
			"$name: snowflake_to_timestamptz of the largest ID");
		psql_fails_like(
			$node,
			'SELECT * FROM snowflake_parse(9223372036854775807)',
			qr/ERROR:  snowflake timestamp $max_field is out of range for timestamp with time zone/,
			"$name: snowflake_parse of the largest ID");
		# "<@" clamps instead: an ID beyond the last instant lies in every
		# range without an upper limit, and in no range with one.
		is( $sql->(
				q{SELECT snowflake_range_max_id(tstzrange(epoch, NULL)) = 9223372036854775807,
						 9223372036854775807 <@ tstzrange(epoch, NULL),
						 9223372036854775807 <@ opaque(tstzrange(epoch, 'infinity')),
						 9223372036854775807 <@ tstzrange(epoch, lifetime_end, '[]'),
						 9223372036854775807 <@ opaque(tstzrange(epoch, lifetime_end, '[]'))
					FROM layout}),
			't|t|t|f|f',
			"$name: <@ for an ID beyond PostgreSQL's last instant");
	}
	else
	{
		# The lifetime ends with the timestamp field: the largest ID the
		# layout allows (the largest bigint, unless snowflake.id_bits is
		# lower) is the last ID of its last millisecond.
		is( $sql->(
				q{SELECT snowflake_max_id(lifetime_end) = max_id,
						 snowflake_to_timestamptz(max_id) = lifetime_end,
						 (snowflake_parse(max_id)).created_at = lifetime_end
					FROM layout}),
			't|t|t',
			"$name: the largest ID of the layout is the last ID of the lifetime");
		psql_fails_like(
			$node,
			"SELECT snowflake_max_id(timestamptz '$expect{lifetime_end}' + interval '1 ms')",
			qr/ERROR:  timestamp .* is outside the lifetime of snowflake IDs/,
			"$name: snowflake_max_id just after the lifetime");
	}

	#
	# snowflake_compose, snowflake_min_id and snowflake_max_id against
	# snowflake_parse, at every bound inside the lifetime.
	#
	is( $sql->(
			q{SELECT count(*),
					 count(*) FILTER (WHERE NOT (p.created_at = date_trunc('milliseconds', b)
												 AND p.worker_id = w AND p.sequence = s))
				FROM inside, layout,
					 LATERAL (VALUES (0, 0), (max_worker, max_sequence),
									 (max_worker / 2, max_sequence / 2 + 1)) v(w, s),
					 LATERAL snowflake_parse(snowflake_compose(b, w, s)) p}),
		$ninside * 3 . '|0',
		"$name: snowflake_parse(snowflake_compose(t, w, s)) gives back t (to the millisecond), w and s");
	is( $sql->(
			q{SELECT count(*) FILTER (WHERE snowflake_min_id(b) <> snowflake_compose(b, 0, 0)
									   OR snowflake_max_id(b) <> snowflake_compose(b, max_worker, max_sequence)
									   OR (snowflake_parse(snowflake_min_id(b))).created_at <> date_trunc('milliseconds', b)
									   OR snowflake_to_timestamptz(snowflake_max_id(b)) <> date_trunc('milliseconds', b)
									   OR CASE WHEN snowflake_max_id(b) < snowflake_max_id(lifetime_end)
											   THEN snowflake_to_timestamptz(snowflake_max_id(b) + 1) <= date_trunc('milliseconds', b)
										  END
									   OR CASE WHEN snowflake_min_id(b) > 0
											   THEN snowflake_to_timestamptz(snowflake_min_id(b) - 1) >= date_trunc('milliseconds', b)
										  END)
				FROM inside, layout}),
		'0',
		"$name: snowflake_min_id and snowflake_max_id are the first and last ID of the millisecond");
	psql_fails_like(
		$node,
		"SELECT snowflake_compose(now(), $expect{max_worker} + 1, 0)",
		qr/ERROR:  worker id \d+ is out of range for the snowflake layout\nDETAIL:  With snowflake\.worker_bits = \d+, worker ids go from 0 to $expect{max_worker}\./,
		"$name: snowflake_compose with a worker id too large");
	psql_fails_like(
		$node,
		"SELECT snowflake_compose(now(), 0, $expect{max_sequence} + 1)",
		qr/ERROR:  sequence \d+ is out of range for the snowflake layout\nDETAIL:  With snowflake\.sequence_bits = \d+, sequence numbers go from 0 to $expect{max_sequence}\./,
		"$name: snowflake_compose with a sequence too large");

	#
	# The generator agrees with the helpers.
	#
	is( $sql->(
			q{SELECT p.worker_id, abs(extract(epoch FROM snowflake_to_timestamptz(id) - clock_timestamp())) < 5,
					 p.created_at = snowflake_to_timestamptz(id),
					 id BETWEEN snowflake_min_id(clock_timestamp() - interval '5 s')
							AND snowflake_max_id(clock_timestamp() + interval '5 s')
				FROM (SELECT snowflake_nextval() AS id OFFSET 0) n, snowflake_parse(id) p}),
		"$expect{worker_id}|t|t|t",
		"$name: a new ID carries this worker and the current time");

	#
	# id <@ range against its definition, every ID against every range.
	#
	my $brute = 'r @> snowflake_to_timestamptz(id)';
	my ($pairs, $inside, $bad_runtime, $bad_opaque) = split /\|/,
	  $sql->(
		qq{SELECT count(*), count(*) FILTER (WHERE $brute),
				  count(*) FILTER (WHERE (id <@ r) <> ($brute)),
				  count(*) FILTER (WHERE (id <@ opaque(r)) <> ($brute))
			 FROM ranges, ids});
	is($pairs, $nids * $nranges, "$name: every ID is compared with every range");
	cmp_ok($inside, '>', $pairs / 10, "$name: many pairs lie inside");
	cmp_ok($inside, '<', $pairs * 9 / 10, "$name: many pairs lie outside");
	is($bad_runtime, 0,
		"$name: id <@ r with r from a column (bounds computed at run time) agrees with the definition");
	is($bad_opaque, 0,
		"$name: id <@ r with a volatile r (not rewritten) agrees with the definition");
	note "$name: $inside of $pairs pairs inside";
	like(
		$sql->('EXPLAIN (COSTS OFF) SELECT * FROM ranges, ids WHERE id <@ r'),
		qr/\(\((ids\.)?id >= snowflake_range_min_id\(ranges\.r\)\) AND \((ids\.)?id <= snowflake_range_max_id\(ranges\.r\)\)\)/,
		"$name: a range from a column is rewritten into run-time bounds");

	# Each range as a constant (bounds computed while planning) and as a
	# PL/pgSQL variable under a generic plan (a parameter).
	is( $sql->(
			q{SET plan_cache_mode = force_generic_plan;
			  CREATE TABLE mismatches (how text, r tstzrange);
			  DO $$
			  DECLARE
				  rr tstzrange;
				  want bigint[];
				  got bigint[];
			  BEGIN
				  FOR rr IN SELECT r FROM ranges LOOP
					  SELECT coalesce(array_agg(id ORDER BY id), '{}') INTO want
						FROM ids WHERE rr @> snowflake_to_timestamptz(id);
					  EXECUTE format('SELECT coalesce(array_agg(id ORDER BY id), ''{}'') FROM ids WHERE id <@ %L::tstzrange', rr)
						 INTO got;
					  IF got <> want THEN
						  INSERT INTO mismatches VALUES ('constant', rr);
					  END IF;
					  SELECT coalesce(array_agg(id ORDER BY id), '{}') INTO got
						FROM ids WHERE id <@ rr;
					  IF got <> want THEN
						  INSERT INTO mismatches VALUES ('parameter', rr);
					  END IF;
				  END LOOP;
			  END
			  $$;
			  SELECT count(*) FROM mismatches}),
		'0',
		"$name: id <@ with a constant range and with a parameter agrees with the definition");
	note $sql->('SELECT how, r FROM mismatches ORDER BY 1, 2 LIMIT 20')
	  if $sql->('SELECT count(*) FROM mismatches') ne '0';

	# The planner uses the primary key: constant bounds, and a parameterized
	# index scan for a range from the outer side of a join.
	my $first_day = $sql->(
		q{SELECT tstzrange(epoch, epoch + interval '1 day') FROM layout});
	my $plan = $sql->(
		qq{SET enable_seqscan = off; SET enable_bitmapscan = off;
		   EXPLAIN (COSTS OFF) SELECT id FROM ids WHERE id <@ '$first_day'});
	like($plan, qr/Index (Only )?Scan using ids_pkey on ids/,
		"$name: a constant range scans the primary key");
	my ($lo, $hi) = $plan =~
	  /Index Cond: \(\(id >= '(\d+)'::bigint\) AND \(id <= '(\d+)'::bigint\)\)/;
	ok(defined $hi, "$name: with constant bounds") or note $plan;
	is( $sql->(
			qq{SELECT '$lo'::bigint = 0,
					  '$hi'::bigint = snowflake_min_id(epoch + interval '1 day') - 1
				 FROM layout}),
		't|t',
		"$name: the constant bounds are the first ID of the epoch and the last before a day later"
	) if defined $hi;

	$plan = $sql->(
		q{SET enable_seqscan = off; SET enable_hashjoin = off; SET enable_mergejoin = off;
		  SET enable_material = off;
		  EXPLAIN (COSTS OFF) SELECT count(*) FROM ranges JOIN ids ON id <@ r});
	like(
		$plan,
		qr/Nested Loop.*Index (Only )?Scan using ids_pkey on ids.*Index Cond: \(\(id >= snowflake_range_min_id\(ranges\.r\)\) AND \(id <= snowflake_range_max_id\(ranges\.r\)\)\)/s,
		"$name: a join on id <@ r is a parameterized index scan")
	  or note $plan;
	is( $sql->(
			qq{SET enable_seqscan = off; SET enable_hashjoin = off; SET enable_mergejoin = off;
			   SET enable_material = off;
			   SELECT count(*) FROM ranges JOIN ids ON id <@ r}),
		$inside,
		"$name: and finds the same pairs as the definition");

	$node->stop;
	return;
}

# a) No worker field: 51 timestamp bits, 71,000 years.
check_layout(
	'no_worker_bits',
	{ 'snowflake.worker_bits' => 0 },
	worker_id => 0,
	epoch => '2025-01-01 00:00:00+00',
	timestamp_bits => 51,
	max_worker => 0,
	max_sequence => 4095,
	lifetime_end => '73381-09-11 20:14:45.247+00',
	# NULL, -infinity, infinity, epoch - 1 day, epoch - 1 us, lifetime_end
	# + 1 ms and + 1 day
	bounds_outside => 7);

# b) 62 timestamp bits: 146 million years, past timestamp with time zone.
check_layout(
	'wide_timestamp',
	{ 'snowflake.worker_bits' => 0, 'snowflake.sequence_bits' => 1 },
	worker_id => 0,
	epoch => '2025-01-01 00:00:00+00',
	timestamp_bits => 62,
	max_worker => 0,
	max_sequence => 1,
	lifetime_end => $pg_last_ms,
	outlives_timestamptz => 1,
	# NULL, -infinity, infinity, epoch - 1 day, epoch - 1 us (lifetime_end
	# + 1 ms and + 1 day are beyond timestamp with time zone, so not in
	# bounds at all)
	bounds_outside => 5);

# c) Another epoch, and 8 + 14 bits for the worker and sequence.
check_layout(
	'epoch_2010',
	{
		'snowflake.epoch' => '2010-06-01 00:00:00+00',
		'snowflake.worker_bits' => 8,
		'snowflake.sequence_bits' => 14
	},
	worker_id => 200,
	epoch => '2010-06-01 00:00:00+00',
	timestamp_bits => 41,
	max_worker => 255,
	max_sequence => 16383,
	lifetime_end => '2080-02-05 15:47:35.551+00',
	bounds_outside => 7);

# d) IDs of 53 bits, exact as JavaScript numbers: 4 + 8 bits for the worker
#    and sequence leave the default 41 timestamp bits.
check_layout(
	'id_bits_53',
	{
		'snowflake.id_bits' => 53,
		'snowflake.worker_bits' => 4,
		'snowflake.sequence_bits' => 8
	},
	worker_id => 9,
	epoch => '2025-01-01 00:00:00+00',
	timestamp_bits => 41,
	max_worker => 15,
	max_sequence => 255,
	lifetime_end => '2094-09-07 15:47:35.551+00',
	bounds_outside => 7);

done_testing();
