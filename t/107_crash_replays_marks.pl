
# Copyright (c) 2026, snowflake contributors

# Pins the mark's WAL records and their redo in crash recovery.
#
# In the other crash tests the mark file is current when the server crashes,
# so they would pass even if no mark were ever logged in WAL.  Here the file
# is made stale on purpose: take a copy of it, checkpoint, issue IDs that
# cross the mark several times (the server's clock moved forward a few
# seconds at a time, more than the one-second mark window), put the old copy
# back and crash.  The server then starts with its clock a minute behind the
# real time, over a minute behind the last ID.  The old file and the clock
# both lie below the later IDs; only redo of the mark records logged after
# the checkpoint can raise the generator above them.  Redo also writes the
# replayed mark into the file, so a second restart would keep it.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

need_libfaketime();

my $node = snowflake_node('crash_redo', worker_id => 1);
my $mark_file = $node->data_dir . '/snowflake.mark';

start_with_fake_clock($node, '+0');
$node->safe_psql('postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE ids (id bigint NOT NULL, phase int NOT NULL);
	INSERT INTO ids SELECT snowflake_nextval(), 1 FROM generate_series(1, 1000);
});

# The copy of the mark file, taken before the checkpoint.
my $old_mark = read_mark_file(
	$node,
	'phase 1 wrote the mark file',
	'the mark file holds one ID in decimal');
my $old_contents = slurp_file($mark_file);

$node->safe_psql('postgres', 'CHECKPOINT');
issue_ids_across_marks($node, 2, 5,
	'after the checkpoint, the IDs crossed the mark at least 5 times');
my $max_before = max_id($node);
is($node->safe_psql('postgres', "SELECT ${old_mark}::bigint < $max_before"),
	't', 'the old mark file does not cover the IDs issued after the checkpoint');

# Put the old copy back (by a rename, like the server does) and crash.
open my $fh, '>', "$mark_file.stale" or die "could not write $mark_file.stale: $!";
print $fh $old_contents;
close $fh or die "could not close $mark_file.stale: $!";
rename "$mark_file.stale", $mark_file or die "could not rename to $mark_file: $!";
$node->stop('immediate');
is(slurp_file($mark_file), $old_contents,
	'at the crash, the mark file is the old copy');

# Restart a minute behind the real time, so about 75 s behind the last ID.
set_snowflake_conf($node, 'snowflake.max_drift' => 600000);
my $log_offset = -s $node->logfile;
start_with_fake_clock($node, '-60');
clock_offset_ok($node, -60, "the server's clock is a minute behind");

my $log = slurp_file($node->logfile, $log_offset);
like($log, qr/database system was interrupted/, 'server log: the server crashed');
like($log, qr/redo starts at/, 'server log: crash recovery replayed WAL');
like($log, qr/redo done at/, 'server log: redo finished');

is( $node->safe_psql(
		'postgres',
		"SELECT (snowflake_parse($max_before)).created_at > clock_timestamp()"),
	't', 'after the restart the clock is behind the last ID issued');
is( $node->safe_psql(
		'postgres',
		"SELECT mark_id >= $max_before, last_id >= $max_before FROM snowflake_stats"),
	't|t', 'redo raised the mark and the floor above every ID issued before the crash');
my $new_mark = read_mark_file(
	$node,
	'the mark file exists after recovery',
	'the mark file holds one ID in decimal after recovery');
is($node->safe_psql('postgres', "SELECT ${new_mark}::bigint >= $max_before"),
	't', 'redo wrote the replayed mark into the mark file');

issue_above($node, 3, 1000, $max_before,
	'every ID after the crash is larger than every ID before it');
is($node->safe_psql('postgres', 'SELECT count(*) FROM ids'),
	'7000', 'every phase issued its IDs');

$node->stop;
done_testing();
