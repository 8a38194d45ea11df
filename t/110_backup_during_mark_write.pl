
# Copyright (c) 2026, snowflake contributors

# A base backup taken while a mark is being written resumes above every ID
# committed in it.
#
# A backup holds the mark file as it copied it, after the backup's
# checkpoint, and the WAL from that checkpoint's redo pointer.  A mark is
# made durable in both places, the file first, then the WAL record, and no
# ID under it is handed out before both are done: so either the file was
# durable before the checkpoint began, or the record is in the backup's WAL.
# (In the other order, a checkpoint between the record and the file leaves
# the record before the redo pointer while the copy still finds the old
# file, and the restored server reissues IDs.)
#
# The shim t/mark_stall.c holds a mark write between writing the new mark
# file and renaming it into place.  Inside that window each backup runs its
# checkpoint and copies the old mark file; then the write goes on, the
# transaction that needed it commits, and the backup ends.  The backup is
# restored with its clock an hour behind, where only the replayed mark can
# keep it above the IDs committed in it.  Both ways of taking a backup:
# pg_basebackup (whose copy of the mark file the shim holds until the
# transaction committed) and the low-level pg_backup_start()/pg_backup_stop()
# API with a copy made here.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::RecursiveCopy;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

need_libfaketime();

my $primary = snowflake_node('backup_primary', worker_id => 1,
	init => { allows_streaming => 1 });
my $stall = start_with_mark_stall($primary);
$primary->safe_psql('postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE ids (id bigint NOT NULL, phase int NOT NULL);
	INSERT INTO ids SELECT snowflake_nextval(), 1 FROM generate_series(1, 1000);
});

# Start an insert whose first ID needs a new mark, and hold its mark write
# before the rename.  Returns the psql run.
sub start_stalled_insert
{
	my ($phase) = @_;

	return start_held_insert(
		$primary, $stall,
		sub {
			psql_in_background($primary,
				"INSERT INTO ids SELECT snowflake_nextval(), $phase FROM generate_series(1, 1000)"
			);
		},
		sub { $primary->safe_psql('postgres', "DELETE FROM ids WHERE phase = $phase"); });
}

# Restore backup $name of the primary with the clock an hour behind; check
# that it holds the rows of $phase, that its copy of the mark file does not
# cover them (so the backup really was taken inside the mark write), and
# that it issues IDs above every ID committed in it.
sub restore_and_check
{
	my ($name, $phase) = @_;
	my $backup_mark = slurp_file($primary->backup_dir . "/$name/snowflake.mark");
	chomp $backup_mark;

	my $restored = PostgreSQL::Test::Cluster->new("restored_$name");
	$restored->init_from_backup($primary, $name);
	set_snowflake_conf($restored, 'snowflake.max_drift' => 4000000);
	start_with_fake_clock($restored, '-3600');
	clock_offset_ok($restored, -3600, "$name: the restored server's clock is an hour behind");

	is($restored->safe_psql('postgres', "SELECT count(*) FROM ids WHERE phase = $phase"),
		'1000', "$name: the backup holds the rows committed during the mark write");
	my $max = max_id($restored);
	is($restored->safe_psql('postgres', "SELECT ${backup_mark}::bigint < $max"),
		't', "$name: the backup's copy of the mark file is the old mark");
	issue_above($restored, $phase + 100, 1000, $max,
		"$name: every ID from the restored server is above every ID committed in the backup");
	$restored->stop;
	return;
}

#
# pg_basebackup -X stream -c fast
#
my $insert = start_stalled_insert(2);
stall_set($stall, 'copy');
my $backup_path = $primary->backup_dir . '/basebackup';
my ($bb_out, $bb_err) = ('', '');
my $basebackup = IPC::Run::start(
	[
		$primary->installed_command('pg_basebackup'), '-D', $backup_path, '-X', 'stream', '-c', 'fast',
		'--no-sync', '-h', $primary->host, '-p', $primary->port
	],
	'>', \$bb_out, '2>', \$bb_err,
	IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
stall_wait($stall, 'copy');
stall_release($stall, 'rename');
psql_finished_ok($insert, 'pg_basebackup: the insert during the mark write');
stall_release($stall, 'copy');
$basebackup->finish;
is($? >> 8, 0, 'pg_basebackup: exits with status 0') or diag $bb_err;
restore_and_check('basebackup', 2);

#
# The low-level API: pg_backup_start(), a copy of the data directory,
# pg_backup_stop(), then the WAL.
#
$insert = start_stalled_insert(3);
my $session = $primary->background_psql('postgres');
$session->query_safe("SELECT pg_backup_start('lowlevel', true)");
$backup_path = $primary->backup_dir . '/lowlevel';
PostgreSQL::Test::RecursiveCopy::copypath(
	$primary->data_dir,
	$backup_path,
	filterfn => sub {
		my $src = shift;
		return $src !~ m{^(pg_wal|postmaster\.pid|postmaster\.opts)$};
	});
stall_release($stall, 'rename');
psql_finished_ok($insert, 'low-level API: the insert during the mark write');
my $label = $session->query_safe('SELECT labelfile FROM pg_backup_stop(false)');
$session->quit;
like($label, qr/^START WAL LOCATION: /, 'low-level API: pg_backup_stop returns the backup label');
open my $fh, '>', "$backup_path/backup_label"
  or die "could not write $backup_path/backup_label: $!";
print $fh "$label\n";
close $fh or die "could not close $backup_path/backup_label: $!";
PostgreSQL::Test::RecursiveCopy::copypath($primary->data_dir . '/pg_wal',
	"$backup_path/pg_wal");
restore_and_check('lowlevel', 3);

$primary->stop;
done_testing();
