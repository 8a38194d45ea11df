
# Copyright (c) 2026, snowflake contributors

# Configuration mistakes: snowflake not preloaded, and bad values in
# postgresql.conf.  In every case the server must start (or keep running)
# and snowflake_nextval() must refuse with a message that names the problem,
# every time it is called, rather than hand out IDs under the wrong settings.
# ALTER SYSTEM must refuse a bad epoch, or a layout that cannot work, before
# it reaches the file.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# Run $sql (two calls of something) in one session without stopping at the
# first error; check that both calls fail with $expected and nothing comes
# back.
sub fails_twice_like
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($node, $sql, $expected, $test_name) = @_;
	my ($ret, $stdout, $stderr) =
	  $node->psql('postgres', "$sql;\n$sql;\n", on_error_stop => 0);
	my @errors = $stderr =~ /^.*ERROR:.*$/mg;

	is($stdout, '', "$test_name: returns nothing");
	is(scalar(@errors), 2, "$test_name: both calls in one session fail");
	like($_, $expected, "$test_name: error message") for @errors;
	return;
}

#
# a) Not in shared_preload_libraries.
#
my $plain = snowflake_node('nopreload', preload => 0);
$plain->start;

$plain->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is( $plain->safe_psql(
		'postgres',
		q{SELECT to_regprocedure('snowflake_nextval()') IS NOT NULL
			 AND to_regprocedure('snowflake_currval()') IS NOT NULL
			 AND to_regprocedure('snowflake_parse(bigint)') IS NOT NULL}),
	't',
	'CREATE EXTENSION works without preloading');

my $not_loaded = qr/ERROR:  snowflake must be loaded via shared_preload_libraries/;
for my $call (
	'SELECT snowflake_nextval()',
	'SELECT * FROM snowflake_parse(1)',
	'SELECT snowflake_currval()')
{
	my $stderr = psql_fails_like($plain, $call, $not_loaded,
		"not preloaded: $call");
	like(
		$stderr,
		qr/HINT:  .*shared_preload_libraries/,
		"not preloaded: $call: hint names shared_preload_libraries");
}

# Loading the library into a session after start is no way around it.
psql_fails_like(
	$plain,
	"LOAD 'snowflake'; SELECT snowflake_nextval()",
	$not_loaded,
	'not preloaded: after LOAD in the session');

check_no_crash($plain, 'not preloaded');
$plain->stop;

#
# b) Bad values in postgresql.conf.  One node, restarted for each case; the
# node's own postgresql.conf has a good worker id, and each case overrides
# settings through the included snowflake_test.conf.
#
my $node = snowflake_node('conf', worker_id => 1);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

is( $node->safe_psql(
		'postgres', 'SELECT worker_id FROM snowflake_parse(snowflake_nextval())'),
	'1',
	'good settings: IDs are generated');

my @cases = (
	{
		name => 'worker id outside the range of the setting',
		conf => { 'snowflake.worker_id' => '5000000' },
		show => { 'snowflake.worker_id' => 'unset' },
		error => qr/ERROR:  snowflake\.worker_id is not set/,
		log => qr/WARNING:  .*5000000.*"snowflake\.worker_id"/,
	},
	{
		name => 'worker id too big for worker_bits',
		conf => { 'snowflake.worker_id' => '2000' },
		show => { 'snowflake.worker_id' => '2000' },
		error => qr/ERROR:  snowflake\.worker_id 2000 does not fit in snowflake\.worker_bits = 10/,
	},
	{
		name => 'epoch in the future',
		conf => { 'snowflake.epoch' => '2999-01-01 00:00:00+00' },
		show => { 'snowflake.epoch' => '2999-01-01 00:00:00+00' },
		error => qr/ERROR:  system clock is before snowflake\.epoch/,
	},
	{
		name => 'epoch that is not a timestamp',
		conf => { 'snowflake.epoch' => 'not a date' },
		show => { 'snowflake.epoch' => 'not a date' },
		error => qr/ERROR:  invalid value for snowflake\.epoch: "not a date"/,
		parse_fails => 1,
		reload => 1,
	},
	{
		name => 'layout without room for the timestamp',
		conf => {
			'snowflake.worker_bits' => '20',
			'snowflake.sequence_bits' => '20'
		},
		show => {
			'snowflake.worker_bits' => '20',
			'snowflake.sequence_bits' => '20'
		},
		error => qr/ERROR:  snowflake layout leaves too few bits for the timestamp/,
		parse_fails => 1,
	});

for my $case (@cases)
{
	my $name = $case->{name};

	set_snowflake_conf($node, %{ $case->{conf} });
	my $log_offset = -s $node->logfile;
	$node->restart;

	is($node->safe_psql('postgres', 'SELECT 1'), '1', "$name: server starts");
	for my $setting (sort keys %{ $case->{show} })
	{
		is($node->safe_psql('postgres', "SHOW $setting"),
			$case->{show}{$setting}, "$name: SHOW $setting");
	}
	if ($case->{log})
	{
		ok($node->log_contains($case->{log}, $log_offset),
			"$name: the server log warns about the value");
	}

	fails_twice_like($node, 'SELECT snowflake_nextval()',
		$case->{error}, "$name: snowflake_nextval()");

	if ($case->{parse_fails})
	{
		psql_fails_like($node, 'SELECT * FROM snowflake_parse(1)',
			$case->{error}, "$name: snowflake_parse()");
	}

	# A reload re-reads the file; the server keeps the value it started
	# with, and keeps refusing.
	if ($case->{reload})
	{
		$node->reload;
		for my $setting (sort keys %{ $case->{show} })
		{
			is($node->safe_psql('postgres', "SHOW $setting"),
				$case->{show}{$setting}, "$name: SHOW $setting after reload");
		}
		fails_twice_like($node, 'SELECT snowflake_nextval()',
			$case->{error}, "$name: snowflake_nextval() after reload");
	}
}

# Back to good settings: the failures above were the settings, not the node.
set_snowflake_conf($node);
$node->restart;
is( $node->safe_psql(
		'postgres', 'SELECT worker_id FROM snowflake_parse(snowflake_nextval())'),
	'1',
	'good settings again: IDs are generated');

#
# c) ALTER SYSTEM goes through the epoch's check hook, which rejects an
# epoch in the future or one that is not a timestamp.
#
my $auto_conf = $node->data_dir . '/postgresql.auto.conf';

my $stderr = psql_fails_like(
	$node,
	q{ALTER SYSTEM SET snowflake.epoch = '2999-01-01 00:00:00+00'},
	qr/ERROR:  invalid value for parameter "snowflake\.epoch": "2999-01-01 00:00:00\+00"/,
	'ALTER SYSTEM with an epoch in the future');
like($stderr, qr/DETAIL:  .*future/,
	'ALTER SYSTEM with an epoch in the future: detail says why');

$stderr = psql_fails_like(
	$node,
	q{ALTER SYSTEM SET snowflake.epoch = 'garbage'},
	qr/ERROR:  invalid value for parameter "snowflake\.epoch": "garbage"/,
	'ALTER SYSTEM with an epoch that is not a timestamp');
like($stderr, qr/DETAIL:  Write it in ISO 8601 as YYYY-MM-DD HH:MM:SS/,
	'ALTER SYSTEM with an epoch that is not a timestamp: detail says why');

unlike(slurp_file($auto_conf), qr/snowflake/,
	'rejected epochs are not written to postgresql.auto.conf');

# The same command with a good epoch works, so the refusals above were about
# the values.
$node->safe_psql('postgres',
	q{ALTER SYSTEM SET snowflake.epoch = '2020-01-01 00:00:00+00'});
like(
	slurp_file($auto_conf),
	qr/snowflake\.epoch = '2020-01-01 00:00:00\+00'/,
	'ALTER SYSTEM accepts an epoch in the past');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET snowflake.epoch');

#
# d) ALTER SYSTEM checks a value with the other settings as the next start
# would read them: a value edited into postgresql.conf but not yet in force
# counts, as do values ALTER SYSTEM wrote (sql/settings.sql), and a reload
# logs a pending layout that cannot work.
#
set_snowflake_conf($node, 'snowflake.worker_bits' => 14);
$stderr = psql_fails_like(
	$node,
	q{ALTER SYSTEM SET snowflake.sequence_bits = 15},
	qr/ERROR:  invalid value for parameter "snowflake\.sequence_bits": 15/,
	'ALTER SYSTEM with a layout that fits the running worker bits, not the pending ones');
like(
	$stderr,
	qr/DETAIL:  snowflake\.worker_bits = 14 and snowflake\.sequence_bits = 15 would leave 34 of the 63 bits/,
	'the detail names the pending worker bits');
$node->safe_psql('postgres', q{ALTER SYSTEM SET snowflake.sequence_bits = 13});
like(slurp_file($auto_conf), qr/snowflake\.sequence_bits = '13'/,
	'a layout that fits the pending worker bits is accepted');

set_snowflake_conf($node, 'snowflake.worker_bits' => 16);
my $log_offset = -s $node->logfile;
$node->reload;
ok( $node->wait_for_log(
		qr/invalid value for parameter "snowflake\.worker_bits": 16\n.*DETAIL:  snowflake\.worker_bits = 16 and snowflake\.sequence_bits = 13 would leave 34 of the 63 bits/,
		$log_offset),
	'a reload logs a pending layout that cannot work');
is($node->safe_psql('postgres', 'SHOW snowflake.worker_bits'),
	'10', 'the running layout is unchanged');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET snowflake.sequence_bits');
set_snowflake_conf($node);
$node->reload;

check_no_crash($node, 'after the bad settings');

$node->stop;
done_testing();
