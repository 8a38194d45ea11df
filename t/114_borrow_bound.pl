
# Copyright (c) 2026, snowflake contributors

# No call, by any role, can spend the server's tolerance for clock steps.
# Calls that use up milliseconds (bursts, batches) may run IDs ahead of the
# clock only by snowflake.max_borrow, counted from a clock that ignores steps
# back; snowflake.max_drift stays free for the clock's own steps.
#
# a) With the default settings and an ordinary role (no privileges of its
#    own): a batch that needs a minute of ID time is refused at once, before
#    anything is reserved; the largest batch the error names succeeds; right
#    after it another session's next ID is stamped within max_borrow of the
#    server's clock; and a 5 s step back of the clock afterwards makes no
#    call of a steady stream fail.
# b) A layout of 2 IDs per millisecond, so that any machine draws faster
#    than its capacity: one statement of single calls is paced (it waits for
#    the clock instead of failing, and never runs more than max_borrow
#    ahead); with max_borrow and max_wait at 0 the same statement is refused
#    with the error that names the bound.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes ();

need_libfaketime();

my $capacity_error =
  qr/ERROR:  snowflake IDs are being drawn faster than the layout's capacity/;

#
# a) The default layout (4096 IDs per ms) and settings: max_borrow 1 s,
# max_drift 60 s, max_wait 1 s.
#
my $node = snowflake_node('borrow', worker_id => 1);
start_with_fake_clock($node, '+0');
$node->safe_psql(
	'postgres', q{
	CREATE EXTENSION snowflake;
	CREATE ROLE app LOGIN;
	CREATE TABLE drawn (ord bigserial PRIMARY KEY, id bigint NOT NULL, phase int NOT NULL);
	GRANT SELECT, INSERT ON drawn TO app;
	GRANT USAGE ON SEQUENCE drawn_ord_seq TO app;
});
is( $node->safe_psql(
		'postgres',
		q{SELECT rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = 'app'}),
	'f|f|f',
	'the role "app" has no privileges of its own');

# Run $sql as "app" in a new session: (exit code, stdout, stderr).
sub as_app
{
	my ($sql) = @_;
	return $node->psql('postgres', $sql, extra_params => [ '-U', 'app' ]);
}

my ($ret, $stdout, $stderr) =
  as_app('INSERT INTO drawn (id, phase) VALUES (snowflake_nextval(), 0)');
is($ret, 0, 'app draws an ID');
is($node->safe_psql('postgres', 'SELECT drift_ms, largest_drift_ms FROM snowflake_stats'),
	'0|0', 'no drift before the batches');

# 1. A batch that needs 59815 ms of ID time: on the old code it reserved
# them all in one step and every later ID ran ~60 s ahead of the clock.
($ret, $stdout, $stderr) = as_app(
	"\\set VERBOSITY verbose\nSELECT snowflake_nextval(245000000) LIMIT 1");
isnt($ret, 0, 'a batch of 245000000 IDs by app is refused');
like(
	$stderr,
	qr/ERROR:  53400: snowflake_nextval\(245000000\) asks for more IDs than one call may take/,
	'the batch: error message and SQLSTATE');
like($stderr, qr/snowflake\.max_borrow.*snowflake\.max_wait/,
	'the batch: the error names max_borrow and max_wait');
my $largest = (1000 + 1000) * 4096;
my ($named) = $stderr =~ /at most (\d+) IDs fit in one call/;
is($named // 'none', $largest,
	'the batch: the error names the largest batch that fits, (max_borrow + max_wait) ms of IDs');
is( $node->safe_psql(
		'postgres',
		'SELECT ids_issued, drift_ms, largest_drift_ms, refusals FROM snowflake_stats'),
	'1|0|0|1',
	'the batch reserved nothing: no ID issued, no drift, the refusal counted');

# 2. The largest batch that fits: it borrows max_borrow ahead of the clock
# and waits (about max_wait) for the clock for the rest.
($ret, $stdout, $stderr) =
  as_app("SELECT snowflake_nextval($largest) LIMIT 1");
is($ret, 0, "the largest batch that fits, $largest IDs, succeeds");
is($stderr, '', 'the largest batch: no error');
is( $node->safe_psql(
		'postgres', 'SELECT ids_issued, refusals, waits > 0 FROM snowflake_stats'),
	1 + $largest . '|1|t',
	'the largest batch: all its IDs issued, after waiting for the clock');

# 3. Right after it, another session's next ID is stamped at most
# max_borrow ahead of the server's clock, compared on the server.  (The ID's
# millisecond is counted from the clock that ignores steps back, which may
# be a fraction of a millisecond ahead of the wall clock: +1 ms.)
my $ahead_ms = $node->safe_psql(
	'postgres', q{
	WITH i AS (INSERT INTO drawn (id, phase) VALUES (snowflake_nextval(), 3) RETURNING id)
	SELECT round(extract(epoch FROM snowflake_to_timestamptz(id) - clock_timestamp()) * 1000)
	  FROM i});
cmp_ok($ahead_ms, '<=', 1001,
	"the next ID of another session is at most max_borrow ahead of the clock ($ahead_ms ms)");
cmp_ok($ahead_ms, '>', 0,
	"and ahead of it: the batch did borrow ($ahead_ms ms)");

# 4. The clock steps back 5 s.  Another session draws an ID every 0.1 s for
# 6 s: none is refused, and all keep increasing.
my $log_offset = -s $node->logfile;
set_fake_clock($node, '-5');
my $offset = server_clock_offset($node);
cmp_ok($offset, '<', -4, "the server's clock stepped back 5 s (offset $offset s)");

my $session = $node->background_psql(
	'postgres',
	on_error_stop => 0,
	extra_params => [ '-U', 'app' ]);
my @ahead;
for my $i (1 .. 60)
{
	# how far the ID is ahead of the server's clock, in ms
	push @ahead, scalar $session->query(q{
		INSERT INTO drawn (id, phase) VALUES (snowflake_nextval(), 4)
		RETURNING round(extract(epoch FROM snowflake_to_timestamptz(id) - clock_timestamp()) * 1000)});
	Time::HiRes::sleep(0.1);
}
is($session->{stderr}, '', 'clock 5 s back: no call of the steady stream fails');
$session->quit;
is($node->safe_psql('postgres', 'SELECT count(*) FROM drawn WHERE phase = 4'),
	'60', 'clock 5 s back: all 60 calls stored their ID');
check_strictly_increasing($node, 'drawn', undef, 'ord',
	'before the batch, after it, and across the step');
cmp_ok($ahead[0] // 0, '>', 1000,
	"clock 5 s back: the first ID after the step is ahead of the clock by more than max_borrow ($ahead[0] ms)");
is( $node->safe_psql(
		'postgres', 'SELECT refusals, clock_rollbacks >= 1 FROM snowflake_stats'),
	'1|t',
	'clock 5 s back: no refusal besides the batch, and the step was seen');
my @steps = logged_rollbacks($node, $log_offset);
is(scalar(@steps), 1, 'the step back is logged once');

set_fake_clock($node, '+0');
check_no_crash($node, 'after the step');
$node->stop;

#
# b) 2 IDs per millisecond (sequence_bits = 1): every machine draws faster
# than that, so one statement of 5000 single calls (2500 ms of ID time)
# must be paced once it is max_borrow ahead, unless each call took more
# than 0.3 ms.
#
my $tiny = snowflake_node(
	'tiny',
	worker_id => 1,
	conf => { 'snowflake.sequence_bits' => 1 });
$tiny->start;
$tiny->safe_psql(
	'postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE ids (n int PRIMARY KEY, id bigint NOT NULL);
});

# 5. Paced, never refused, never past max_borrow (+1 ms, as above).
$tiny->safe_psql('postgres',
	'INSERT INTO ids SELECT n, snowflake_nextval() FROM generate_series(1, 5000) AS n');
is( $tiny->safe_psql(
		'postgres',
		'SELECT ids_issued, refusals, waits > 0, largest_drift_ms <= 1001 FROM snowflake_stats'
	),
	'5000|0|t|t',
	'tiny layout: 5000 single calls in one statement waited for the clock, no refusal, never past max_borrow');
note 'tiny layout: largest drift '
  . $tiny->safe_psql('postgres', 'SELECT largest_drift_ms FROM snowflake_stats')
  . ' ms';
check_strictly_increasing($tiny, 'ids', undef, 'n', 'tiny layout');

# 6. Nothing to borrow and no waiting: drawing faster than 2 IDs per ms is
# refused, with the error that names the bound.
reload_snowflake_conf(
	$tiny,
	'snowflake.max_borrow' => '0',
	'snowflake.max_wait' => '0');
($ret, $stdout, $stderr) = $tiny->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT count(snowflake_nextval()) FROM generate_series(1, 1000000)"
);
isnt($ret, 0, 'max_borrow = 0, max_wait = 0: drawing above capacity fails');
like(
	$stderr,
	qr/ERROR:  53400: snowflake IDs are being drawn faster than the layout's capacity/,
	'max_borrow = 0, max_wait = 0: error message and SQLSTATE');
like(
	$stderr,
	qr/DETAIL:  The layout holds 2 IDs per millisecond \(snowflake\.sequence_bits = 1\); IDs drawn faster than that may run 0 ms ahead of the clock \(snowflake\.max_borrow/,
	'max_borrow = 0, max_wait = 0: the detail gives the capacity and the bound');
like($stderr, qr/HINT:  .*snowflake\.max_wait.*snowflake\.max_borrow/,
	'max_borrow = 0, max_wait = 0: the hint names the settings');
is($tiny->safe_psql('postgres', 'SELECT refusals FROM snowflake_stats'),
	'1', 'max_borrow = 0, max_wait = 0: the refusal is counted');

check_no_crash($tiny, 'tiny layout');
$tiny->stop;
done_testing();
