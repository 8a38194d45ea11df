
# Copyright (c) 2026, snowflake contributors

# Pins the refusal to generate when the persisted mark cannot be read at
# server start (src/generator.c, STEP_MARK_UNREADABLE): without the mark, new
# IDs could repeat old ones, so the generator must not guess.
#
# snowflake.mark is damaged in several ways (not a number, no newline as
# after a torn write, empty, a negative number, unreadable) and the server is
# restarted each time: it starts and answers queries, but every
# snowflake_nextval() fails with SQLSTATE XX001 (data_corrupted) and the
# hint, no ID comes back, the log says what was wrong and the file is left
# as it was.  Removed as the hint says, the mark file is no obstacle: after a
# restart IDs are issued and a new mark file is written.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = snowflake_node('mark_damaged', worker_id => 1);
my $mark_file = $node->data_dir . '/snowflake.mark';

$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE ids (id bigint NOT NULL, phase int NOT NULL);
	INSERT INTO ids SELECT snowflake_nextval(), 0 FROM generate_series(1, 10);
});
my $good_mark = read_mark_file(
	$node,
	'the mark file exists',
	'the mark file holds one ID in decimal');

my @cases = (
	{
		name => 'not a number',
		contents => "not a number\n",
		log => qr/snowflake mark file "snowflake\.mark" does not hold an ID/,
	},
	{
		name => 'torn write (no newline)',
		contents => substr($good_mark, 0, 5),
		log => qr/snowflake mark file "snowflake\.mark" does not hold an ID/,
	},
	{
		name => 'empty',
		contents => '',
		log => qr/snowflake mark file "snowflake\.mark" does not hold an ID/,
	},
	{
		name => 'negative',
		contents => "-$good_mark\n",
		log => qr/snowflake mark file "snowflake\.mark" does not hold an ID/,
	},
	{
		name => 'unreadable',
		contents => "$good_mark\n",
		mode => 0000,
		log => qr/could not open file "snowflake\.mark": Permission denied/,
	});

foreach my $case (@cases)
{
	my $name = $case->{name};

	$node->stop;
	open my $fh, '>', $mark_file or die "could not write $mark_file: $!";
	print $fh $case->{contents};
	close $fh or die "could not close $mark_file: $!";
	if (defined $case->{mode})
	{
		chmod $case->{mode}, $mark_file or die "could not chmod $mark_file: $!";
		if (open(my $probe, '<', $mark_file))
		{
			close $probe;
			chmod 0600, $mark_file or die "could not chmod $mark_file: $!";
		  SKIP:
			{
				skip "$name: this user can read any file", 1;
			}
			next;
		}
	}
	my $log_offset = -s $node->logfile;
	$node->start;

	is($node->safe_psql('postgres', 'SELECT 1'), '1', "$name: server starts");
	ok($node->log_contains($case->{log}, $log_offset),
		"$name: the server log says what is wrong with the file");

	my ($ret, $stdout, $stderr) = $node->psql(
		'postgres',
		"\\set VERBOSITY verbose\n"
		  . "SELECT snowflake_nextval();\n"
		  . "INSERT INTO ids SELECT snowflake_nextval(), 1 FROM generate_series(1, 10);\n",
		on_error_stop => 0);
	is($stdout, '', "$name: no ID returned");
	my @errors = $stderr =~ /^.*ERROR:.*$/mg;
	is(scalar(@errors), 2, "$name: both calls in one session fail");
	like($_,
		qr/ERROR:  XX001: snowflake mark file "snowflake\.mark" could not be read at server start/,
		"$name: error message and SQLSTATE XX001")
	  for @errors;
	like($stderr, qr/HINT:  Restore the file from a backup, or, .* remove it and restart the server\./,
		"$name: the hint says to restore or remove the file");
	is( $node->safe_psql(
			'postgres',
			'SELECT count(*) FROM ids WHERE phase = 1'),
		'0', "$name: no ID stored");
	is( $node->safe_psql(
			'postgres', 'SELECT ids_issued, refusals FROM snowflake_stats'),
		'0|2', "$name: no ID issued, both refusals counted");
	check_no_crash($node, $name);

	chmod 0600, $mark_file if defined $case->{mode};
	is(slurp_file($mark_file), $case->{contents},
		"$name: the damaged file is left as it was");
}

# Remove the file, as the hint says, and restart.
$node->stop;
unlink $mark_file or die "could not remove $mark_file: $!";
$node->start;
$node->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_nextval(), 2 FROM generate_series(1, 10)');
is($node->safe_psql('postgres', 'SELECT count(*) FROM ids WHERE phase = 2'),
	'10', 'without the mark file, IDs are issued again');
my $new_mark = read_mark_file(
	$node,
	'a new mark file is written',
	'the new mark file holds one ID in decimal');
is( $node->safe_psql(
		'postgres',
		"SELECT ${new_mark}::bigint >= max(id) FROM ids WHERE phase = 2"),
	't', 'the new mark file covers the new IDs');

$node->stop;
done_testing();
