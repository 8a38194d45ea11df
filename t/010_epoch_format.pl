
# Copyright (c) 2026, snowflake contributors

# snowflake.epoch stands for the same instant whatever the server's
# DateStyle and timezone_abbreviations.
#
# PostgreSQL's own date input reads "01/02/2025" as 1 February under
# DateStyle DMY and 2 January under MDY, and "IST" as +05:30 or +02
# depending on timezone_abbreviations.  So the epoch is read in one form
# only, ISO 8601 with a numeric offset, Z, UTC or a zone name (or none, for
# UTC), by one parser both where the server reads it at start and in
# ALTER SYSTEM's check.  Each server here (DMY, MDY, the India abbreviation
# set) reads an ISO epoch, spelt a different way each time, as the same
# instant, refuses to generate with an ambiguous one, and its ALTER SYSTEM
# refuses ambiguous dates whatever the session's DateStyle.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $form = qr/DETAIL:  Write it in ISO 8601 as YYYY-MM-DD HH:MM:SS/;
my $abbreviation = qr/DETAIL:  Time zone abbreviations are not accepted/;

my @servers = (
	{
		name => 'DateStyle ISO, DMY',
		conf => { DateStyle => 'ISO, DMY' },
		iso => '2025-02-01T00:00:00Z',
		ambiguous => '01/02/2025 00:00:00+00',
		refusal => $form,
	},
	{
		name => 'DateStyle ISO, MDY',
		conf => { DateStyle => 'ISO, MDY' },
		iso => '2025-02-01 05:30:00.000+05:30',
		ambiguous => '01/02/2025 00:00:00+00',
		refusal => $form,
	},
	{
		name => 'timezone_abbreviations India',
		conf => { timezone_abbreviations => 'India' },
		iso => '2025-02-01 01:00:00 Europe/Paris',
		ambiguous => '2025-02-01 05:30:00 IST',
		refusal => $abbreviation,
	});

my $node = snowflake_node('epoch_format', worker_id => 1);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

foreach my $server (@servers)
{
	my $name = $server->{name};

	set_snowflake_conf($node, %{ $server->{conf} },
		'snowflake.epoch' => $server->{iso});
	$node->restart;
	is( $node->safe_psql(
			'postgres', q{
			SET TimeZone = 'UTC';
			SELECT epoch = '2025-02-01 00:00:00+00' FROM snowflake_stats}),
		't',
		"$name: the epoch '$server->{iso}' is 2025-02-01 00:00 UTC");
	is($node->safe_psql('postgres', 'SELECT snowflake_nextval() > 0'),
		't', "$name: IDs are issued");

	set_snowflake_conf($node, %{ $server->{conf} },
		'snowflake.epoch' => $server->{ambiguous});
	$node->restart;
	my $stderr = psql_fails_like(
		$node,
		'SELECT snowflake_nextval()',
		qr/ERROR:  invalid value for snowflake\.epoch: "\Q$server->{ambiguous}\E"/,
		"$name: the epoch '$server->{ambiguous}'");
	like($stderr, $server->{refusal},
		"$name: the epoch '$server->{ambiguous}': the detail shows what is accepted");
}

# ALTER SYSTEM on the DMY server, whose own DateStyle would read 13/01/2025,
# from sessions under either DateStyle: the answer does not depend on it.
set_snowflake_conf($node, DateStyle => 'ISO, DMY');
$node->restart;
foreach my $style ('ISO, DMY', 'ISO, MDY')
{
	foreach my $epoch ('13/01/2025 00:00:00+00', '01/13/2025 00:00:00+00')
	{
		my $stderr = psql_fails_like(
			$node,
			"SET DateStyle = '$style'; ALTER SYSTEM SET snowflake.epoch = '$epoch'",
			qr/ERROR:  invalid value for parameter "snowflake\.epoch": "\Q$epoch\E"/,
			"DMY server, $style session: ALTER SYSTEM with '$epoch'");
		like($stderr, $form,
			"DMY server, $style session: ALTER SYSTEM with '$epoch': the detail shows the form");
	}
	$node->safe_psql('postgres',
		"SET DateStyle = '$style'; ALTER SYSTEM SET snowflake.epoch = '2025-01-13 00:00:00+00'");
}
is( $node->safe_psql(
		'postgres',
		q{SELECT string_agg(setting, ', ') FROM pg_file_settings
		   WHERE name = 'snowflake.epoch' AND sourcefile LIKE '%postgresql.auto.conf'}),
	'2025-01-13 00:00:00+00',
	'only the ISO epoch reached postgresql.auto.conf');

$node->stop;
done_testing();
